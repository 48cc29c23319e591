// Asks for a password on the controlling terminal with echo turned off
// (termios on /dev/tty), so it works even when stdin/stdout are redirected.
#pragma once

#include <optional>
#include <string>

namespace rftp::client {

// nullopt when there is no terminal to ask on (cron, CI, no controlling tty).
std::optional<std::string> prompt_password(const std::string &prompt);

}  // namespace rftp::client
