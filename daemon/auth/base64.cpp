#include "daemon/auth/base64.h"

#include <openssl/evp.h>

#include <algorithm>

namespace rftp::daemon {

std::string base64_encode(std::span<const unsigned char> bytes) {
    // EVP_EncodeBlock writes 4 chars per 3 bytes (rounded up) plus a NUL.
    std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char *>(out.data()), bytes.data(),
                            static_cast<int>(bytes.size()));
    out.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return out;
}

std::optional<std::vector<unsigned char>> base64_decode(std::string_view text) {
    if (text.empty() || text.size() % 4 != 0) return std::nullopt;
    // EVP_DecodeBlock skips surrounding whitespace and does not report
    // padding, so check the alphabet here and strip the padding bytes below.
    const size_t padding = text.ends_with("==") ? 2 : text.ends_with("=") ? 1 : 0;
    const bool alphabet_ok = std::all_of(text.begin(), text.end() - static_cast<long>(padding), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
    });
    if (!alphabet_ok) return std::nullopt;

    std::vector<unsigned char> out(3 * text.size() / 4);
    int n = EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char *>(text.data()),
                            static_cast<int>(text.size()));
    if (n < 0 || static_cast<size_t>(n) != out.size()) return std::nullopt;
    out.resize(out.size() - padding);

    // Unused low bits in the last character must be zero: only the canonical
    // spelling is accepted, so one hash has one text.
    if (base64_encode(out) != text) return std::nullopt;
    return out;
}

}  // namespace rftp::daemon
