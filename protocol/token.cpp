#include "protocol/token.h"

namespace rftp::wire {

std::string token_hex(const Token &t) {
    static const char *digits = "0123456789abcdef";
    std::string s;
    for (uint8_t b : t) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

Result<Token> parse_token_hex(std::string_view hex) {
    if (hex.size() != 2 * kTokenSize) return fail_msg("token must be " + std::to_string(2 * kTokenSize) + " hex digits");
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    Token t{};
    for (std::size_t i = 0; i < kTokenSize; ++i) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return fail_msg("token has a character that is not a hex digit");
        t[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return t;
}

}  // namespace rftp::wire
