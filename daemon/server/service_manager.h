// Tells the service manager (systemd, Type=notify) where rftpd stands: ready
// once every listener is bound, stopping once a stop began. Without
// NOTIFY_SOCKET in the environment (a daemon started by hand, in a test, or
// under Type=simple) these do nothing.
#pragma once

#include <string>

namespace rftp::daemon {

// READY=1 with a STATUS= line: `systemctl start` returns, and a deploy
// script goes on, only once clients can connect.
void tell_service_manager_ready(const std::string &status);
// STOPPING=1 with a STATUS= line saying why and how many sessions end.
void tell_service_manager_stopping(const std::string &status);
// A new STATUS= line alone (what a stop still waits for).
void tell_service_manager_status(const std::string &status);

}  // namespace rftp::daemon
