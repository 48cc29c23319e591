#include "common/byte_size.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace rftp {

namespace {

// The power of two a unit letter stands for; nullopt for none of K, M, G.
std::optional<unsigned> unit_shift(char unit) {
    switch (std::toupper(static_cast<unsigned char>(unit))) {
        case 'K': return 10;
        case 'M': return 20;
        case 'G': return 30;
        default: return std::nullopt;
    }
}

}  // namespace

std::optional<uint64_t> parse_byte_size(std::string_view text) {
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr == text.data()) return std::nullopt;
    std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
    unsigned shift = 0;
    if (!unit.empty() && unit != "B" && unit != "b") {
        auto letter = unit_shift(unit.front());
        if (!letter) return std::nullopt;
        shift = *letter;
        unit.remove_prefix(1);
        auto lower = [](std::string_view s) {
            std::string out(s);
            for (char &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return out;
        };
        if (!unit.empty() && lower(unit) != "ib" && lower(unit) != "b") return std::nullopt;
    }
    if (shift != 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
}

std::string byte_size_text(uint64_t bytes) {
    if (bytes != 0 && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes != 0 && bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "K";
    return std::to_string(bytes);
}

std::string human_bytes(double bytes) {
    static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024 && u < 5) {
        bytes /= 1024;
        ++u;
    }
    char buf[32];
    const bool whole = bytes == static_cast<double>(static_cast<long long>(bytes));
    std::snprintf(buf, sizeof buf, u == 0 || whole ? "%.0f %s" : "%.1f %s", bytes, units[u]);
    return buf;
}

}  // namespace rftp
