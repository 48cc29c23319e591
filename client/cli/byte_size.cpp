#include "client/cli/byte_size.h"

#include <cctype>
#include <charconv>
#include <string>

namespace rftp::client {

Result<uint64_t> parse_byte_size(std::string_view text) {
    auto bad = [&] { return fail_msg("bad size '" + std::string(text) + "' (expected e.g. 65536, 512K, 8M, 1G)"); };
    uint64_t value = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || p == text.data()) return bad();
    std::string suffix(p, text.data() + text.size());
    for (char &c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (suffix.ends_with("IB")) suffix.resize(suffix.size() - 2);
    else if (suffix.size() > 1 && suffix.ends_with("B")) suffix.pop_back();
    unsigned shift = 0;
    if (suffix.empty() || suffix == "B") shift = 0;
    else if (suffix == "K") shift = 10;
    else if (suffix == "M") shift = 20;
    else if (suffix == "G") shift = 30;
    else return bad();
    if (shift && value > (UINT64_MAX >> shift)) return bad();
    return value << shift;
}

std::string byte_size_text(uint64_t bytes) {
    if (bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "M";
    if (bytes % (1u << 10) == 0) return std::to_string(bytes >> 10) + "K";
    return std::to_string(bytes);
}

}  // namespace rftp::client
