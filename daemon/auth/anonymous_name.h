// The names of anonymous FTP (RFC 1635): "anonymous" or "ftp", in any
// letter case. A login under one is anonymous whether or not the server
// offers it, and no configured account may take one.
#pragma once

#include <string_view>

#include "common/ascii_case.h"

namespace rftp::daemon {

// ASCII case only, on purpose: no locale, and no look-alike letters.
inline bool is_anonymous_name(std::string_view user) {
    const std::string lower = ascii_lower(user);
    return lower == "anonymous" || lower == "ftp";
}

}  // namespace rftp::daemon
