// Standard base64 (RFC 4648 section 4, with '=' padding, no line breaks) as
// used in the "$scrypt$" password hash format. Decoding is strict: only the
// canonical encoding of some byte string is accepted, so a hash has exactly
// one spelling and stray whitespace is an error rather than silently ignored.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rftp::daemon {

std::string base64_encode(std::span<const unsigned char> bytes);
std::optional<std::vector<unsigned char>> base64_decode(std::string_view text);

}  // namespace rftp::daemon
