// Who to log in as, without ever needing a password on the command line:
// user from the URL, else ~/.netrc "login" for the host, else $RFTP_USER,
// else "anonymous". Password from ~/.netrc ($NETRC overrides the path), else
// $RFTP_PASSWORD, else a no-echo prompt on /dev/tty, else an auth failure
// that says how to supply one. The password is looked up only when the
// server asks for it (331), so servers that need none never cause a prompt.
#pragma once

#include <optional>
#include <string>

#include "client/exit_codes.h"
#include "client/url.h"

namespace rftp::client {

struct Credentials {
    std::string user;
    std::optional<std::string> netrc_password;
    std::optional<std::string> account;
    std::string host;  // for the prompt
};

// Reads netrc (a missing file is fine; an unreadable or malformed one is an error).
Outcome<Credentials> resolve_credentials(const Url &url);

// The names of anonymous FTP, whose password is no secret.
bool is_anonymous(const std::string &user);

// The password for PASS: netrc, env, anonymous convention, prompt, or failure.
// A typed password is remembered for the process, so -j sessions prompt once.
Outcome<std::string> password_for(const Credentials &creds);

// The password if it is known without asking (netrc, env, anonymous, typed
// already), so it may go before the server asks for it.
std::optional<std::string> known_password(const Credentials &creds);

}  // namespace rftp::client
