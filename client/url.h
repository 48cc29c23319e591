// rftp URLs: rftp://[user@]host[:port]/path (default port 2121) and
// ftp://[user@]host[:port]/path (default port 21). IPv6 hosts are written in
// brackets. User and path are percent-decoded; a password in the URL is
// refused so it never ends up in shell history or `ps` output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::client {

inline constexpr uint16_t kRftpDefaultPort = 2121;
inline constexpr uint16_t kFtpDefaultPort = 21;
inline constexpr uint16_t kFtpsDefaultPort = 990;  // implicit FTPS

struct Url {
    std::string scheme;               // "rftp", "ftp" or "ftps" (implicit TLS)
    std::optional<std::string> user;  // decoded; absent when the URL names none
    std::string host;                 // without brackets, e.g. "::1"
    uint16_t port = 0;
    std::string path;                 // decoded, always starts with '/'

    // host[:port] for messages, with brackets around IPv6 addresses.
    std::string authority() const;
    bool implicit_tls() const { return scheme == "ftps"; }
};

Result<Url> parse_url(std::string_view text);

// The URL as typed, with any password in it replaced by "***", for messages:
// parse_url refuses such a URL, and its error must not repeat the secret.
std::string without_password(std::string_view text);

// Decodes %XX escapes; fails on a truncated or non-hex escape or a decoded NUL.
Result<std::string> percent_decode(std::string_view text);

}  // namespace rftp::client
