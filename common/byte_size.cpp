#include "common/byte_size.h"

#include <algorithm>
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

bool equals_ignoring_case(std::string_view text, std::string_view lower) {
    return text.size() == lower.size() &&
           std::equal(text.begin(), text.end(), lower.begin(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

std::optional<uint64_t> parse_byte_size(std::string_view text) {
    uint64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || ptr == text.data()) return std::nullopt;
    std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
    unsigned shift = 0;
    if (auto letter = unit.empty() ? std::nullopt : unit_shift(unit.front())) {
        shift = *letter;
        unit.remove_prefix(1);
    }
    // "iB" only after a multiple's letter: "8MiB", never "512iB".
    if (!unit.empty() && !equals_ignoring_case(unit, "b") && !(shift != 0 && equals_ignoring_case(unit, "ib")))
        return std::nullopt;
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
