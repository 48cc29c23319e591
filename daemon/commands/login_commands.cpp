// USER, PASS, TCKT, QUIT: getting in and out.
#include <openssl/crypto.h>

#include "common/log.h"
#include "common/socket_address.h"
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

// Refused login tickets that close a session: an honest client shows one.
constexpr unsigned kMaxRefusedTickets = 3;

// The session is in: its user, root and working directory. How says
// which proof it showed (password, ticket).
void enter(Session &s, const LoginGrant &grant, UserRoot root, const std::string &how) {
    s.state.user = grant.user;
    s.state.grant = grant;
    s.state.root = std::make_shared<const UserRoot>(std::move(root));
    s.state.cwd = "/";
    s.state.stream_kept = std::make_shared<middleware::StreamCache>();
    log::notice(s.log_prefix() + " event=login access=" + (s.state.root->writable() ? "read-write" : "read-only") +
                " method=" + how);
    s.reply(230, "Login successful.");
}

// A wrong proof: the session's count of them closes it at the limit.
void refuse_login(Session &s, const std::string &text) {
    if (++s.state.failed_logins >= s.options().max_login_failures) {
        s.reply_and_close(421, "Too many failed logins; closing.", "too many failed logins");
        return;
    }
    s.reply(530, text);
}

// TCKT after a login: a ticket for this client's other sessions.
void issue_ticket(Session &s) {
    if (s.state.grant.anonymous) {
        s.reply(504, "No login tickets for anonymous logins.");
        return;
    }
    auto ticket = s.server().login_tickets().issue(
        s.id(), TicketHolder{s.state.grant, address_text(s.peer()), s.tls_active()});
    if (!ticket) {
        log::error(s.log_prefix() + " event=login_ticket_error error=" + log::quote(ticket.error().message));
        s.reply(451, "No login ticket now; log the other sessions in with PASS.");
        return;
    }
    log::debug(s.log_prefix() + " event=login_ticket_issued");
    s.reply(200, "TCKT " + *ticket);
}

// TCKT <ticket> in the place of PASS: no password check, the root opened
// on a worker as PASS opens it.
void redeem_ticket(Session &s, const std::string &ticket) {
    const std::string user = std::exchange(s.state.pending_user, {});
    auto grant = s.server().login_tickets().redeem(ticket, user, address_text(s.peer()), s.tls_active());
    if (!grant) {
        // Neither for the source's throttle nor for max_login_failures: 256
        // random bits are not guessed, and a client whose first session has
        // ended shows its stale ticket once, then its password. A session
        // that goes on showing tickets is closed all the same.
        log::notice(s.log_prefix() + " event=login_ticket_refused user=" + log::quote(user));
        if (++s.state.refused_tickets >= kMaxRefusedTickets) {
            s.reply_and_close(421, "Too many login tickets refused; closing.", "too many login tickets refused");
            return;
        }
        s.reply(530, "Login ticket not valid; log in with PASS.");
        return;
    }
    struct Opened {
        LoginGrant grant;
        Result<UserRoot> root = fail_msg("not run");
    };
    auto opened = std::make_shared<Opened>(Opened{*grant});
    s.run_blocking_work([opened] { opened->root = UserRoot::open(opened->grant.root, opened->grant.writable); },
                        [&s, opened] {
                            if (!opened->root) {
                                log::error(s.log_prefix() + " event=login_error user=" + log::quote(opened->grant.user) +
                                           " error=" + log::quote(opened->root.error().message));
                                s.reply(530, "Login incorrect.");
                                return;
                            }
                            enter(s, opened->grant, std::move(*opened->root), "ticket");
                        });
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
                enter(s, *attempt->grant, std::move(*attempt->root), "password");
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
            refuse_login(s, "Login incorrect.");
        });
}

void cmd_tckt(Session &s, const std::string &arg) {
    if (s.logged_in()) {
        if (!arg.empty()) {
            s.reply(503, "Already logged in.");
            return;
        }
        issue_ticket(s);
        return;
    }
    if (arg.empty()) {
        s.reply(530, "Log in first; then TCKT gives a ticket for other sessions.");
        return;
    }
    if (refused_in_clear(s)) return;
    if (s.state.pending_user.empty()) {
        s.reply(503, "Login with USER first.");
        return;
    }
    redeem_ticket(s, arg);
}

void cmd_quit(Session &s, const std::string &) {
    s.abort_transfer();
    s.reply_and_close(221, "Goodbye.", "QUIT");
}

}  // namespace rftp::daemon
