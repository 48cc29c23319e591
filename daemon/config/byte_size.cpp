#include "daemon/config/byte_size.h"

#include <charconv>

namespace rftp::daemon {

std::optional<uint64_t> parse_byte_size(std::string_view text) {
    uint64_t value = 0;
    const char *begin = text.data();
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc{} || ptr == begin) return std::nullopt;

    std::string_view unit(ptr, static_cast<size_t>(end - ptr));
    unsigned shift = 0;
    if (!unit.empty()) {
        switch (unit.front()) {
            case 'K': case 'k': shift = 10; break;
            case 'M': case 'm': shift = 20; break;
            case 'G': case 'g': shift = 30; break;
            default: return std::nullopt;
        }
        unit.remove_prefix(1);
        if (!unit.empty() && unit != "iB" && unit != "B") return std::nullopt;
    }
    if (shift != 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
}

}  // namespace rftp::daemon
