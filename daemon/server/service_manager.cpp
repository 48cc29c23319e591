#include "daemon/server/service_manager.h"

#include <systemd/sd-daemon.h>

#include <cstring>

#include "common/log.h"

namespace rftp::daemon {
namespace {

// A STATUS= value is one line: a newline would start another assignment.
std::string one_line(std::string text) {
    for (char &c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
}

void notify(const std::string &state, const std::string &status) {
    std::string message = (state.empty() ? "" : state + "\n") + "STATUS=" + one_line(status);
    // Keep NOTIFY_SOCKET (unset_environment 0): both messages go to it.
    int r = sd_notify(0, message.c_str());
    if (r < 0)
        log::warning("event=notify_failed state=" + (state.empty() ? "STATUS" : state) +
                     " error=" + log::quote(std::strerror(-r)) + " reason=\"the service manager was not told\"");
}

}  // namespace

void tell_service_manager_ready(const std::string &status) { notify("READY=1", status); }

void tell_service_manager_stopping(const std::string &status) { notify("STOPPING=1", status); }

void tell_service_manager_status(const std::string &status) { notify("", status); }

}  // namespace rftp::daemon
