// ~/.netrc, as ftp(1) and curl read it: whitespace-separated tokens
// "machine NAME", "default", "login L", "password P", "account A" and
// "macdef NAME" (whose body runs to the next empty line and is skipped).
// Tokens may be double-quoted with backslash escapes, as curl accepts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace rftp::client {

struct NetrcEntry {
    std::string machine;  // empty for the "default" entry
    bool is_default = false;
    std::optional<std::string> login;
    std::optional<std::string> password;
    std::optional<std::string> account;
};

Result<std::vector<NetrcEntry>> parse_netrc(std::string_view text);

// The entry for host: the first "machine host" entry, else "default". When
// user is given, an entry whose login names another user does not match,
// so a password is never sent for the wrong account.
const NetrcEntry *find_netrc_entry(const std::vector<NetrcEntry> &entries, std::string_view host,
                                   const std::optional<std::string> &user);

}  // namespace rftp::client
