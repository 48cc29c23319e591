// Decimal numbers as FTP commands, replies and files carry them: ASCII
// digits only, no sign, no space, no exponent. One parser, so a count the
// daemon reads and the same count the client reads mean the same thing.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace rftp {

// The value of text when it is all digits and at most max; otherwise none.
inline std::optional<uint64_t> parse_decimal(std::string_view text,
                                             uint64_t max = std::numeric_limits<uint64_t>::max()) {
    if (text.empty() || text.size() > 20 || text.front() < '0' || text.front() > '9') return std::nullopt;
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
    return value;
}

}  // namespace rftp
