#include "client/progress/json_events.h"

#include "client/stdout_output.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>

namespace rftp::client {

void emit_json_event(const nlohmann::json &event) {
    // Replace invalid UTF-8 (odd file names) instead of failing mid-stream.
    std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    // Session threads and the progress line emit at once: a line longer
    // than a pipe's atomic write could otherwise be cut by another.
    static std::mutex one_line_at_a_time;
    std::lock_guard lock(one_line_at_a_time);
    std::size_t done = 0;
    while (done < line.size()) {
        ssize_t n = ::write(STDOUT_FILENO, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {  // stdout gone: nothing sensible left to tell here; main says it
            remember_stdout_error(n < 0 ? errno : EIO);
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

}  // namespace rftp::client
