// USER, PASS, QUIT: getting in and out.
#include <openssl/crypto.h>

#include "common/log.h"
#include "daemon/auth/anonymous_name.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/server/server.h"
#include "daemon/session/session.h"
#include "middleware/tcp/parallel_transfer.h"

namespace rftp::daemon {
namespace {

// Fail-closed (daemon/SECURITY.md): on a listener that requires TLS no
// password crosses the network in clear, not even a wrong one.
bool refused_in_clear(Session &s) {
    if (!s.tls_required() || s.tls_active()) return false;
    s.reply(530, "This server takes logins only over TLS: send AUTH TLS first (FTPS).");
    return true;
}

}  // namespace

void cmd_user(Session &s, const std::string &arg) {
    if (s.logged_in()) {
        s.reply(503, "Already logged in.");
        return;
    }
    if (refused_in_clear(s)) return;
    s.state.pending_user = arg;
    if (is_anonymous_name(arg))
        s.reply(331, "Anonymous login: send your e-mail address as password.");
    else
        s.reply(331, "Please specify the password.");
}

void cmd_pass(Session &s, const std::string &arg) {
    if (s.logged_in()) {
        s.reply(503, "Already logged in.");
        return;
    }
    if (refused_in_clear(s)) return;
    if (s.state.pending_user.empty()) {
        s.reply(503, "Login with USER first.");
        return;
    }
    struct Attempt {
        std::string user, password;
        Result<LoginGrant> grant = fail_msg("not run");
        std::optional<UserRoot> root;
        ~Attempt() { OPENSSL_cleanse(password.data(), password.size()); }
    };
    auto attempt = std::make_shared<Attempt>();
    attempt->user = std::move(s.state.pending_user);
    attempt->password = arg;
    s.state.pending_user.clear();
    const Authenticator &auth = s.server().authenticator();
    // scrypt takes tens of milliseconds by design: never on the loop.
    s.run_login_check(
        attempt->user,
        [attempt, &auth] {
            attempt->grant = auth.login(attempt->user, attempt->password);
            if (attempt->grant) {
                auto root = UserRoot::open(attempt->grant->root, attempt->grant->writable);
                if (root) attempt->root.emplace(std::move(*root));
                else attempt->grant = fail(root.error().with_context("root of " + attempt->grant->user));
            }
        },
        [&s, attempt] {
            LoginThrottle &throttle = s.server().logins().throttle();
            const std::string source = login_source(s.peer());
            if (attempt->grant && attempt->root) {
                // Anyone may log in anonymously where that is on: it clears nothing.
                if (!attempt->grant->anonymous) s.server().logins().succeeded(source, attempt->user);
                s.state.user = attempt->grant->user;
                s.state.root = std::make_shared<const UserRoot>(std::move(*attempt->root));
                s.state.cwd = "/";
                s.state.stream_kept = std::make_shared<middleware::StreamCache>();
                log::notice(s.log_prefix() + " event=login access=" +
                          (s.state.root->writable() ? "read-write" : "read-only"));
                s.reply(230, "Login successful.");
                return;
            }
            // With the peer's address on the line: what fail2ban and its kind
            // match. A wrong password slows the source's next logins; a root
            // that cannot be opened is no guess and does not.
            if (attempt->grant.error().code != kLoginIncorrect) {
                s.server().logins().not_a_guess(s.id(), source);
                log::error(s.log_prefix() + " event=login_error user=" + log::quote(attempt->user) +
                           " error=" + log::quote(attempt->grant.error().message));
            } else {
                unsigned failures = throttle.failed(source, LoginThrottle::Clock::now());
                // The spacing of the source's next turns (whole seconds, as configured).
                log::notice(s.log_prefix() + " event=login_failed user=" + log::quote(attempt->user) +
                            " failures=" + std::to_string(failures) +
                            " delay_s=" + std::to_string(throttle.delay_after(failures).count() / 1000));
            }
            if (++s.state.failed_logins >= s.options().max_login_failures) {
                s.reply_and_close(421, "Too many failed logins; closing.", "too many failed logins");
                return;
            }
            s.reply(530, "Login incorrect.");
        });
}

void cmd_quit(Session &s, const std::string &) {
    s.abort_transfer();
    s.reply_and_close(221, "Goodbye.", "QUIT");
}

}  // namespace rftp::daemon
