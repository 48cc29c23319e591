// A 16-byte secret rftpd hands a client on the control connection (in the
// RADR reply, or OPTS DATATOKEN's) for the client to show on a connection
// of its own (an RDMA queue pair's request, a TCP data connection), so the
// server knows that connection is its client's and not whoever came first
// (docs/protocol.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::wire {

inline constexpr std::size_t kTokenSize = 16;
using Token = std::array<uint8_t, kTokenSize>;

// 32 lower-case hex digits; parse_token_hex takes either case.
std::string token_hex(const Token &t);
Result<Token> parse_token_hex(std::string_view hex);

}  // namespace rftp::wire
