// Checks USER/PASS against the configured accounts. Built once from the
// options and then only read, so login() may run on any thread (it is slow by
// design: one scrypt per attempt, so sessions call it from a worker thread).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/result.h"
#include "daemon/config/options.h"

namespace rftp::daemon {

struct LoginGrant {
    std::string user;   // account name ("anonymous" for anonymous logins)
    std::string root;   // absolute host directory the user sees as "/"
    bool writable = false;
    bool anonymous = false;
};

// Error::code of a login refused for wrong credentials. Its message is the
// same for unknown users and wrong passwords and may be shown to the client.
// Any other code is an internal failure (e.g. out of memory in scrypt): log
// its message, and show the client only a generic refusal.
inline constexpr int kLoginIncorrect = -EACCES;

class Authenticator {
public:
    explicit Authenticator(const DaemonOptions &options);

    // One scrypt per call whatever the outcome, except anonymous logins,
    // so timing does not reveal which user names exist.
    Result<LoginGrant> login(std::string_view user, std::string_view password) const;

    // The scrypt cost an unknown name is checked at ("ln=15,r=8,p=1"): that of
    // most configured accounts, so the time of the answer tells no names apart.
    std::string unknown_name_cost() const;

private:
    std::map<std::string, UserAccount, std::less<>> accounts_;
    bool anonymous_enabled_ = false;
    std::string anonymous_root_;
    std::string dummy_hash_;  // what an unknown name is checked against
};

}  // namespace rftp::daemon
