#include "daemon/auth/password_hash.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <charconv>
#include <cstdint>
#include <vector>

#include "daemon/auth/base64.h"
#include "daemon/auth/crypt_hash.h"
#include "daemon/auth/hash_rules.h"

namespace rftp::daemon {
namespace {

constexpr std::string_view kPrefix = "$scrypt$";

struct ScryptCost {
    unsigned ln = 15;  // log2 of N
    unsigned r = 8;
    unsigned p = 1;
};

constexpr ScryptCost kNewHashCost{};
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;

// Bounds for hashes read from the config. Without them a hostile or mistyped
// hash ("ln=30") would make every login take minutes or gigabytes. The caps
// allow 8x the memory and 16x the work of new hashes.
constexpr unsigned kMinLn = 10, kMaxLn = 20;
constexpr unsigned kMaxR = 32, kMaxP = 16;
constexpr uint64_t kMaxWork = 1ull << 22;            // p * r * N, default is 2^18
constexpr size_t kMinSaltBytes = 8, kMaxSaltBytes = 64;
constexpr size_t kMinHashBytes = 16, kMaxHashBytes = 64;

struct ParsedHash {
    ScryptCost cost;
    std::vector<unsigned char> salt;
    std::vector<unsigned char> hash;
};

bool parse_number(std::string_view &text, std::string_view name, unsigned &out) {
    if (!text.starts_with(name)) return false;
    text.remove_prefix(name.size());
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc{} || ptr == text.data()) return false;
    text.remove_prefix(static_cast<size_t>(ptr - text.data()));
    return true;
}

Result<ScryptCost> parse_cost(std::string_view text) {
    ScryptCost c;
    if (!parse_number(text, "ln=", c.ln) || !parse_number(text, ",r=", c.r) ||
        !parse_number(text, ",p=", c.p) || !text.empty()) {
        return malformed_hash("expected parameters ln=<n>,r=<n>,p=<n>");
    }
    if (c.ln < kMinLn || c.ln > kMaxLn || c.r < 1 || c.r > kMaxR || c.p < 1 || c.p > kMaxP) {
        return malformed_hash("scrypt parameters out of bounds (ln 10..20, r 1..32, p 1..16)");
    }
    const uint64_t n = 1ull << c.ln;
    if (128ull * c.r * n > kMaxHashMemoryBytes) return malformed_hash("scrypt memory cost 128*r*N above 256 MiB");
    if (uint64_t{c.p} * c.r * n > kMaxWork) return malformed_hash("scrypt work p*r*N above 2^22");
    return c;
}

Result<ParsedHash> parse_hash(std::string_view encoded) {
    if (!encoded.starts_with(kPrefix)) return malformed_hash("expected it to start with $scrypt$");
    std::string_view rest = encoded.substr(kPrefix.size());
    const size_t d1 = rest.find('$');
    const size_t d2 = d1 == std::string_view::npos ? d1 : rest.find('$', d1 + 1);
    if (d2 == std::string_view::npos || rest.find('$', d2 + 1) != std::string_view::npos) {
        return malformed_hash("expected $scrypt$<parameters>$<salt>$<hash>");
    }
    ParsedHash parsed;
    auto cost = parse_cost(rest.substr(0, d1));
    if (!cost) return fail(cost.error());
    parsed.cost = *cost;

    auto salt = base64_decode(rest.substr(d1 + 1, d2 - d1 - 1));
    if (!salt) return malformed_hash("salt is not standard base64");
    if (salt->size() < kMinSaltBytes || salt->size() > kMaxSaltBytes) return malformed_hash("salt must be 8..64 bytes");
    parsed.salt = std::move(*salt);

    auto hash = base64_decode(rest.substr(d2 + 1));
    if (!hash) return malformed_hash("hash is not standard base64");
    if (hash->size() < kMinHashBytes || hash->size() > kMaxHashBytes) return malformed_hash("hash must be 16..64 bytes");
    parsed.hash = std::move(*hash);
    return parsed;
}

std::string openssl_error_text() {
    unsigned long code = ERR_get_error();
    if (code == 0) return "unknown OpenSSL error";
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

Status scrypt(std::string_view password, const ScryptCost &cost, const std::vector<unsigned char> &salt,
              std::vector<unsigned char> &out) {
    const uint64_t n = 1ull << cost.ln;
    // OpenSSL's default limit (32 MiB) is just below what N=2^15, r=8 needs,
    // so state the limit: the scrypt buffers plus room for rounding.
    const uint64_t maxmem = 128ull * cost.r * (n + 2) + 128ull * cost.r * cost.p + (1u << 16);
    if (EVP_PBE_scrypt(password.data(), password.size(), salt.data(), salt.size(), n, cost.r, cost.p, maxmem,
                       out.data(), out.size()) != 1) {
        return fail_msg("scrypt failed: " + openssl_error_text(), -EIO);
    }
    return {};
}

}  // namespace

Result<std::string> hash_scrypt(std::string_view password) {
    std::vector<unsigned char> salt(kSaltBytes);
    if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1) {
        return fail_msg("random salt: " + openssl_error_text(), -EIO);
    }
    std::vector<unsigned char> hash(kHashBytes);
    if (auto ok = scrypt(password, kNewHashCost, salt, hash); !ok) return fail(ok.error());
    return std::string(kPrefix) + "ln=" + std::to_string(kNewHashCost.ln) + ",r=" + std::to_string(kNewHashCost.r) +
           ",p=" + std::to_string(kNewHashCost.p) + "$" + base64_encode(salt) + "$" + base64_encode(hash);
}

Result<std::string> hash_password(std::string_view password, HashFormat format) {
    return format == HashFormat::yescrypt ? crypt_hash_password(password) : hash_scrypt(password);
}

Result<bool> verify_password(std::string_view password, std::string_view encoded) {
    if (!encoded.starts_with(kPrefix)) return crypt_verify_password(password, encoded);
    auto parsed = parse_hash(encoded);
    if (!parsed) return fail(parsed.error());
    std::vector<unsigned char> computed(parsed->hash.size());
    if (auto ok = scrypt(password, parsed->cost, parsed->salt, computed); !ok) return fail(ok.error());
    // Constant time, so response timing says nothing about how much matched.
    return CRYPTO_memcmp(computed.data(), parsed->hash.data(), computed.size()) == 0;
}

Status check_hash_format(std::string_view encoded) {
    if (!encoded.starts_with(kPrefix)) return crypt_check_hash_format(encoded);
    auto parsed = parse_hash(encoded);
    if (!parsed) return fail(parsed.error());
    return {};
}

}  // namespace rftp::daemon
