// What an rftp client writes first on each TCP data connection of a session
// that took a data token (OPTS DATATOKEN; docs/protocol.md, "Data
// connection token"): 8 bytes of magic, then the token. The server serves
// a passive data connection only once these 24 bytes arrived and match, so
// another program that connects to the port first (on the same host, or
// behind the same NAT) gets nothing and feeds nothing.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/result.h"

#include "protocol/token.h"

namespace rftp::wire {

inline constexpr std::array<uint8_t, 8> kDataTokenMagic = {'R', 'F', 'T', 'P', 'D', 'A', 'T', '1'};
inline constexpr std::size_t kDataTokenHeaderSize = kDataTokenMagic.size() + kTokenSize;

std::array<uint8_t, kDataTokenHeaderSize> data_token_header(const Token &t);

// The 200 reply to OPTS DATATOKEN, "DATATOKEN <32 hex>", both ways.
std::string format_data_token_reply(const Token &t);
Result<Token> parse_data_token_reply(std::string_view text);

}  // namespace rftp::wire
