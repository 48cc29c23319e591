#include "daemon/auth/crypt_hash.h"

#include <crypt.h>
#include <openssl/crypto.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>

#include "common/decimal.h"
#include "daemon/auth/hash_rules.h"

namespace rftp::daemon {
namespace {

constexpr std::array<std::string_view, 7> kMethods = {"$y$", "$gy$", "$7$", "$6$", "$5$", "$2b$", "$2y$"};
constexpr uint64_t kMaxShaRounds = 10'000'000;  // the default is 5000
constexpr uint64_t kMaxBcryptCost = 16;          // log2 of its rounds; mkpasswd's default is 5
constexpr std::string_view kItoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

std::optional<uint64_t> itoa64_value(char c) {
    auto at = kItoa64.find(c);
    if (at == std::string_view::npos) return std::nullopt;
    return at;
}

// 128 * r * N within the bound. yescrypt ($y$, $gy$): a flags character,
// log2 N - 1, then r - 1 (one character below 47). scrypt ($7$): log2 N,
// then r as five characters, least significant first.
Status check_memory(std::string_view params, bool yescrypt) {
    uint64_t log2_n = 0, r = 0;
    if (yescrypt) {
        auto n = params.size() >= 3 ? itoa64_value(params[1]) : std::nullopt;
        auto r1 = params.size() >= 3 ? itoa64_value(params[2]) : std::nullopt;
        if (!n || !r1 || *r1 >= 47) return malformed_hash("yescrypt parameters out of bounds");
        log2_n = *n + 1, r = *r1 + 1;
    } else {
        auto n = params.empty() ? std::nullopt : itoa64_value(params[0]);
        if (!n || params.size() < 6) return malformed_hash("scrypt parameters out of bounds");
        log2_n = *n;
        for (int i = 0; i < 5; ++i) {
            auto v = itoa64_value(params[1 + i]);
            if (!v) return malformed_hash("scrypt parameters out of bounds");
            r |= *v << (6 * i);
        }
    }
    if (log2_n > 30 || r == 0 || r > 1024 || 128 * r * (1ull << log2_n) > kMaxHashMemoryBytes)
        return malformed_hash("memory cost 128*r*N above 256 MiB");
    return {};
}

// sha*crypt's optional "rounds=N$", bcrypt's "NN$", yescrypt's and
// scrypt's memory: within what a login may take.
Status check_cost(std::string_view encoded) {
    if (encoded.starts_with("$6$") || encoded.starts_with("$5$")) {
        std::string_view rest = encoded.substr(3);
        if (!rest.starts_with("rounds=")) return {};
        rest.remove_prefix(7);
        auto rounds = parse_decimal(rest.substr(0, rest.find('$')));
        if (!rounds || *rounds > kMaxShaRounds) return malformed_hash("sha-crypt rounds above 10000000");
    } else if (encoded.starts_with("$2")) {
        auto cost = parse_decimal(encoded.substr(4, 2));
        if (!cost || *cost > kMaxBcryptCost) return malformed_hash("bcrypt cost above 16");
    } else if (encoded.starts_with("$y$")) {
        return check_memory(encoded.substr(3), true);
    } else if (encoded.starts_with("$gy$")) {
        return check_memory(encoded.substr(4), true);
    } else if (encoded.starts_with("$7$")) {
        return check_memory(encoded.substr(3), false);
    }
    return {};
}

// A whole hash ends in its method's hash: a salt alone ("$6$salt") does not.
Status check_whole(std::string_view encoded) {
    const std::size_t tail = encoded.size() - encoded.rfind('$') - 1;
    const bool bcrypt = encoded.starts_with("$2");
    const std::size_t want = bcrypt ? 53 : encoded.starts_with("$6$") ? 86 : 43;  // bcrypt: salt and hash together
    if (tail != want) return malformed_hash("not a whole hash (a salt without its hash?)");
    return {};
}

// crypt_rn's state is some 32 KiB: on the heap, zeroed as it asks, and
// cleansed after, since it held the password.
struct CryptState {
    std::unique_ptr<crypt_data> data = std::make_unique<crypt_data>();  // value-initialised: zeroed
    ~CryptState() { OPENSSL_cleanse(data.get(), sizeof *data); }
};

}  // namespace

bool is_crypt_hash(std::string_view encoded) {
    for (std::string_view m : kMethods)
        if (encoded.starts_with(m)) return true;
    return false;
}

namespace {

// The method, the setting and the cost, without hashing anything.
Status check_setting(std::string_view encoded) {
    if (encoded.starts_with("$1$")) return malformed_hash("md5crypt ($1$) is too weak; use yescrypt (mkpasswd -m yescrypt)");
    if (!is_crypt_hash(encoded)) return malformed_hash("not a yescrypt, scrypt, sha512crypt or bcrypt hash");
    const std::string text(encoded);
    switch (crypt_checksalt(text.c_str())) {
        case CRYPT_SALT_OK: return check_cost(encoded);
        case CRYPT_SALT_METHOD_LEGACY: return malformed_hash("libcrypt counts this method as legacy; use yescrypt (mkpasswd -m yescrypt)");
        default: return malformed_hash("libcrypt does not take it");
    }
}

// crypt_rn of phrase with encoded as its setting; none if libcrypt refuses.
std::optional<std::string> crypt_with(std::string phrase, const std::string &encoded) {
    CryptState state;
    const char *hashed = crypt_rn(phrase.c_str(), encoded.c_str(), state.data.get(), sizeof *state.data);
    OPENSSL_cleanse(phrase.data(), phrase.size());
    if (!hashed) return std::nullopt;
    return std::string(hashed);
}

}  // namespace

Status crypt_check_hash_format(std::string_view encoded) {
    if (auto ok = check_setting(encoded); !ok) return ok;
    return check_whole(encoded);
}

Result<std::string> crypt_hash_password(std::string_view password) {
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    // Null random bytes: libxcrypt draws the salt from the kernel itself.
    if (!crypt_gensalt_rn("$y$", 0, nullptr, 0, setting, sizeof setting))
        return fail_msg("yescrypt salt: " + std::string(std::strerror(errno)), -EIO);
    auto hashed = crypt_with(std::string(password), setting);
    if (!hashed) return fail_msg("yescrypt failed", -EIO);
    return *hashed;
}

Result<bool> crypt_verify_password(std::string_view password, std::string_view encoded) {
    if (auto ok = crypt_check_hash_format(encoded); !ok) return fail(ok.error());
    // libxcrypt refuses longer phrases (ERANGE): that is a wrong password,
    // not a broken hash.
    if (password.size() >= CRYPT_MAX_PASSPHRASE_SIZE) return false;
    const std::string setting(encoded);
    auto hashed = crypt_with(std::string(password), setting);
    if (!hashed) return malformed_hash("libcrypt does not take it");
    if (hashed->size() != setting.size()) return malformed_hash("not a whole hash (a salt without its hash?)");
    // Constant time, so response timing says nothing about how much matched.
    return CRYPTO_memcmp(hashed->data(), setting.data(), setting.size()) == 0;
}

}  // namespace rftp::daemon
