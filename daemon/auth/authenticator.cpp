#include "daemon/auth/authenticator.h"

#include <algorithm>

#include "daemon/auth/anonymous_name.h"
#include "daemon/auth/password_hash.h"

namespace rftp::daemon {
namespace {

// A valid hash with the same cost as new hashes, of a password nobody knows
// (32 random bytes, discarded): what unknown users are checked against when
// no account is configured.
constexpr std::string_view kDummyHash =
    "$scrypt$ln=15,r=8,p=1$v0YyPcxFNFdxbeyzLcRqZQ==$GKPpE/hlvhYrHVL9ttCJX8s+kxZHgdgSRmdjfHa6Jgo=";

std::unexpected<Error> login_incorrect() { return fail_msg("Login incorrect.", kLoginIncorrect); }


// A hash's method and cost, the same for hashes that cost the same:
// "$scrypt$ln=15,r=8,p=1", "$y$j9T", "$7$CU..../....", "$2b$12" (for $2y$
// too), "$6$rounds=5000" (also for a $6$ without rounds, which means 5000).
std::string cost_of(std::string_view encoded) {
    if (encoded.starts_with("$7$")) return std::string(encoded.substr(0, 14));  // N, r and p; the salt follows at once
    const auto from = encoded.find('$', 1) + 1, to = encoded.find('$', from);
    if (from == 0 || to == std::string_view::npos) return std::string(encoded);
    std::string method(encoded.substr(0, from));
    if (method == "$2y$") method = "$2b$";
    const bool sha_crypt = method == "$5$" || method == "$6$";
    if (sha_crypt && !encoded.substr(from).starts_with("rounds=")) return method + "rounds=5000";
    return method + std::string(encoded.substr(from, to - from));
}

}  // namespace

Authenticator::Authenticator(const DaemonOptions &options)
    : anonymous_enabled_(options.anonymous_enabled), anonymous_root_(options.anonymous_root), dummy_hash_(kDummyHash) {
    for (const auto &account : options.users) accounts_.emplace(account.name, account);
    // An unknown name costs the hash most accounts cost: a real account's
    // hash of the commonest method and cost (its result is never used for an unknown
    // name). A fixed dummy of the default cost would tell the names of
    // accounts with older or tuned hashes apart by their answers' time.
    std::map<std::string, unsigned> accounts_of_cost;
    unsigned most = 0;
    for (const auto &[name, account] : accounts_)
        if (unsigned n = ++accounts_of_cost[cost_of(account.password_hash)]; n > most) {
            most = n;
            dummy_hash_ = account.password_hash;
        }
}

std::string Authenticator::unknown_name_cost() const { return cost_of(dummy_hash_); }

Result<LoginGrant> Authenticator::login(std::string_view user, std::string_view password) const {
    if (is_anonymous_name(user)) {
        // Any password (by custom an e-mail address); nothing secret to time.
        if (!anonymous_enabled_) return login_incorrect();
        return LoginGrant{"anonymous", anonymous_root_, /*writable=*/false, /*anonymous=*/true};
    }

    auto it = accounts_.find(user);
    const bool known = it != accounts_.end();
    auto match = verify_password(password, known ? std::string_view(it->second.password_hash) : std::string_view(dummy_hash_));
    if (!match) return fail(match.error().with_context("login " + std::string(known ? it->first : "<unknown user>")));
    if (!known || !*match) return login_incorrect();

    const UserAccount &account = it->second;
    return LoginGrant{account.name, account.root, account.access == Access::read_write, /*anonymous=*/false};
}

}  // namespace rftp::daemon
