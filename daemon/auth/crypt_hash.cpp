#include "daemon/auth/crypt_hash.h"

#include <crypt.h>
#include <openssl/crypto.h>

#include <array>
#include <cstring>
#include <memory>
#include <optional>

#include "common/decimal.h"

namespace rftp::daemon {
namespace {

constexpr std::array<std::string_view, 7> kMethods = {"$y$", "$gy$", "$7$", "$6$", "$5$", "$2b$", "$2y$"};
constexpr uint64_t kMaxShaRounds = 10'000'000;  // the default is 5000
constexpr uint64_t kMaxBcryptCost = 16;          // log2 of its rounds; mkpasswd's default is 5

// Error texts never quote the hash: a plain password pasted into the
// config by mistake must not end up in a log.
std::unexpected<Error> malformed(std::string_view why) {
    return fail_msg("malformed password hash: " + std::string(why), -EINVAL);
}

// sha*crypt's optional "rounds=N$" and bcrypt's "NN$" after the method.
Status check_cost(std::string_view encoded) {
    if (encoded.starts_with("$6$") || encoded.starts_with("$5$")) {
        std::string_view rest = encoded.substr(3);
        if (!rest.starts_with("rounds=")) return {};
        rest.remove_prefix(7);
        auto rounds = parse_decimal(rest.substr(0, rest.find('$')));
        if (!rounds || *rounds > kMaxShaRounds) return malformed("sha-crypt rounds above 10000000");
    } else if (encoded.starts_with("$2")) {
        auto cost = parse_decimal(encoded.substr(4, 2));
        if (!cost || *cost > kMaxBcryptCost) return malformed("bcrypt cost above 16");
    }
    return {};
}

// crypt_rn's state is some 32 KiB: on the heap, zeroed as it asks, and
// cleansed after, since it held the password.
struct CryptState {
    std::unique_ptr<crypt_data> data = std::make_unique<crypt_data>();
    CryptState() { std::memset(data.get(), 0, sizeof *data); }
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
    if (encoded.starts_with("$1$")) return malformed("md5crypt ($1$) is too weak; use yescrypt (mkpasswd -m yescrypt)");
    if (!is_crypt_hash(encoded)) return malformed("not a yescrypt, scrypt, sha512crypt or bcrypt hash");
    const std::string text(encoded);
    switch (crypt_checksalt(text.c_str())) {
        case CRYPT_SALT_OK: return check_cost(encoded);
        case CRYPT_SALT_METHOD_LEGACY: return malformed("libcrypt counts this method as legacy; use yescrypt (mkpasswd -m yescrypt)");
        default: return malformed("libcrypt does not take it");
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

// A whole hash reproduces its own length from any phrase; a setting alone
// (a salt without its hash, "$6$salt") comes back longer.
Status crypt_check_hash_format(std::string_view encoded) {
    if (auto ok = check_setting(encoded); !ok) return ok;
    auto hashed = crypt_with("", std::string(encoded));
    if (!hashed || hashed->size() != encoded.size()) return malformed("not a whole hash (a salt without its hash?)");
    return {};
}

Result<std::string> crypt_hash_password(std::string_view password) {
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    // Null random bytes: libxcrypt draws the salt from the kernel itself.
    if (!crypt_gensalt_rn("$y$", 0, nullptr, 0, setting, sizeof setting))
        return fail_msg("yescrypt salt: " + std::string(std::strerror(errno)), -EIO);
    std::string phrase(password);
    CryptState state;
    const char *hashed = crypt_rn(phrase.c_str(), setting, state.data.get(), sizeof *state.data);
    OPENSSL_cleanse(phrase.data(), phrase.size());
    if (!hashed) return fail_msg("yescrypt failed", -EIO);
    return std::string(hashed);
}

Result<bool> crypt_verify_password(std::string_view password, std::string_view encoded) {
    if (auto ok = check_setting(encoded); !ok) return fail(ok.error());
    const std::string setting(encoded);
    auto hashed = crypt_with(std::string(password), setting);
    if (!hashed) return malformed("libcrypt does not take it");
    if (hashed->size() != setting.size()) return malformed("not a whole hash (a salt without its hash?)");
    // Constant time, so response timing says nothing about how much matched.
    return CRYPTO_memcmp(hashed->data(), setting.data(), setting.size()) == 0;
}

}  // namespace rftp::daemon
