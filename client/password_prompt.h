// Asks for a password on the controlling terminal with echo turned off
// (termios on /dev/tty), so it works even when stdin/stdout are redirected.
#pragma once

#include <optional>
#include <string>

#include "client/exit_codes.h"

namespace rftp::client {

// The typed password; nullopt when there is no terminal to ask on (cron, CI,
// no controlling tty). Ctrl-C at the prompt fails with exit 130 and Ctrl-D
// (end of input before Enter) with exit 4: neither sends what was typed.
Outcome<std::optional<std::string>> prompt_password(const std::string &prompt);

}  // namespace rftp::client
