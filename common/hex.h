// Hexadecimal digits, both ways: lower case when written (tokens, digests,
// escaped bytes), either case when read.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace rftp {

inline constexpr char kHexDigits[] = "0123456789abcdef";

inline std::string hex_lower(std::span<const uint8_t> bytes) {
    std::string out;
    out.reserve(bytes.size() * 2);
    for (uint8_t b : bytes) {
        out += kHexDigits[b >> 4];
        out += kHexDigits[b & 15];
    }
    return out;
}

// The value of one hex digit, or -1.
inline int hex_digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace rftp
