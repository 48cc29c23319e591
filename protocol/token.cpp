#include "protocol/token.h"

#include "common/hex.h"

namespace rftp::wire {

std::string token_hex(const Token &t) { return hex_lower(t); }

Result<Token> parse_token_hex(std::string_view hex) {
    if (hex.size() != 2 * kTokenSize) return fail_msg("token must be " + std::to_string(2 * kTokenSize) + " hex digits");
    Token t{};
    for (std::size_t i = 0; i < kTokenSize; ++i) {
        int hi = hex_digit_value(hex[2 * i]), lo = hex_digit_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return fail_msg("token has a character that is not a hex digit");
        t[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return t;
}

}  // namespace rftp::wire
