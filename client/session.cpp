#include "client/session.h"

#include "client/control_tls.h"
#include "client/credentials.h"
#include "client/login_ticket.h"
#include "client/transfer/path_streams.h"
#include "common/log.h"

namespace rftp::client {

std::unexpected<Failure> refused(const std::string &what, const ftp::Reply &reply) {
    return fail_as(classify_refusal(reply), what + ": " + describe(reply));
}

namespace {

// Lines go before their replies are read only to a server whose FEAT says
// PIPELINE (rftpd's), and the password only when it is known without
// asking: a prompt waits for the server's 331.
// ask_ticket: TCKT goes with them, its reply read once the login is in
// (take_ticket).
Outcome<ftp::Reply> user_and_password(FtpConnection &control, const Credentials &creds, bool together,
                                      bool ask_ticket) {
    const std::string user = "USER " + creds.user;
    std::optional<std::string> pass;
    if (together)
        if (auto known = known_password(creds)) pass = "PASS " + *known;
    if (pass) {
        const std::string_view with_ticket[] = {user, *pass, "TCKT"};
        auto sent = control.send_ahead(std::span(with_ticket, ask_ticket ? 3 : 2));
        if (!sent) return std::unexpected(sent.error());
    }
    auto reply = control.command(user);
    if (!reply || reply->code != 331) return reply;  // a PASS sent ahead is read as not wanted
    if (pass) return control.command(*pass);
    auto password = password_for(creds);
    if (!password) return std::unexpected(password.error());
    return control.command("PASS " + *password);
}

// rftpd's form (docs/protocol.md): 64 lower-case hex digits. Anything else
// is not kept, and never sent on.
bool looks_like_a_ticket(std::string_view t) {
    return t.size() == 64 && t.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

// The reply to TCKT (sent with the login, or now), kept on the shelf for
// the run's other sessions. A server that gives none costs them a
// password check each, nothing more.
Outcome<IssuedTicket> take_ticket(FtpConnection &control, const std::shared_ptr<LoginTicketShelf> &shelf) {
    auto reply = control.command("TCKT");
    if (!reply) return std::unexpected(reply.error());
    const std::string text = reply->lines.empty() ? "" : reply->lines.front();
    if (reply->code != 200 || !text.starts_with("TCKT ") || !looks_like_a_ticket(std::string_view(text).substr(5))) {
        log::info("no login ticket for the other sessions (" + std::to_string(reply->code) +
                  "); they send the password");
        return IssuedTicket{};
    }
    return IssuedTicket{shelf, shelf->keep(text.substr(5))};
}

// USER, then the run's ticket in the place of the password. false: the
// ticket was refused (the session then logs in with USER and PASS).
Outcome<bool> login_with_ticket(FtpConnection &control, const Credentials &creds, const std::string &ticket,
                                bool together) {
    const std::string user = "USER " + creds.user, shown = "TCKT " + ticket;
    if (together)
        if (auto sent = control.send_ahead({user, shown}); !sent) return std::unexpected(sent.error());
    auto reply = control.command(user);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 331) {
        // The ticket sent along is answered too: then the session is in step.
        if (together)
            if (auto drained = control.drain_ahead(); !drained) return std::unexpected(drained.error());
        return fail_as(ExitCode::auth, "login as '" + creds.user + "' refused: " + describe(*reply));
    }
    reply = control.command(shown);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code == 230) return true;
    log::info("login ticket refused (" + std::to_string(reply->code) + "); sending the password");
    return false;
}

// issued: the ticket this session got for the run's other sessions, if it asked.
OutcomeStatus login(FtpConnection &control, const Url &url, bool together,
                    const std::shared_ptr<LoginTicketShelf> &tickets, IssuedTicket &issued) {
    auto creds = resolve_credentials(url);
    if (!creds) return std::unexpected(creds.error());
    if (tickets)
        if (auto ticket = tickets->ticket()) {
            auto in = login_with_ticket(control, *creds, *ticket, together);
            // Refused, or the attempt failed: no later session shows it.
            if (!in || !*in) tickets->forget();
            if (!in) return std::unexpected(in.error());
            if (*in) return {};
        }
    const bool ask_ticket = tickets && !tickets->ticket() && !is_anonymous(creds->user);
    auto reply = user_and_password(control, *creds, together, ask_ticket);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code == 332) {
        if (!creds->account)
            return fail_as(ExitCode::auth, "server wants an account (ACCT) for '" + creds->user +
                                               "'; add 'account ...' to its ~/.netrc entry");
        reply = control.command("ACCT " + *creds->account);
        if (!reply) return std::unexpected(reply.error());
    }
    if (!reply->positive_completion())
        return fail_as(reply->code == 421 ? ExitCode::connection : ExitCode::auth,
                       "login as '" + creds->user + "' refused: " + describe(*reply));
    if (!ask_ticket) return {};
    auto taken = take_ticket(control, tickets);
    if (!taken) return std::unexpected(taken.error());
    issued = std::move(*taken);
    return {};
}

// FEAT's list, or none where it is refused (said as what_then).
Outcome<std::optional<ftp::Features>> ask_features(FtpConnection &control, const std::string &what_then) {
    auto feat = control.command("FEAT");
    if (!feat) return std::unexpected(feat.error());
    if (feat->code != 211) {
        log::info("server has no FEAT (" + describe(*feat) + ")" + what_then);
        return std::nullopt;
    }
    return ftp::parse_features(feat->lines);
}

// To an rftp:// URL the session's first command (AUTH TLS, or else FEAT)
// leaves at once, before the greeting is read, and so rides with the TCP
// handshake's last segment: a round trip less. rftpd reads it once its 220
// is out. ftp:// servers get RFC 959's order, the greeting first: some
// may take early words for a client that does not listen.
OutcomeStatus send_first_command_early(FtpConnection &control, const Url &url, const ControlTls &tls) {
    if (url.scheme != "rftp") return {};
    return control.send_ahead({tls.asks_for_tls() ? "AUTH TLS" : "FEAT"});
}

}  // namespace

Outcome<Session> open_session(const Url &url, const Options &options,
                              const std::shared_ptr<LoginTicketShelf> &offered_tickets) {
    auto control = FtpConnection::open(url.host, url.port, options.timeout_seconds);
    if (!control) return std::unexpected(control.error());
    std::string where = url.authority();
    auto tls = ControlTls::prepare(url, options);
    if (!tls) return fail_as(tls.error().exit, where + ": " + tls.error().message);
    if (url.implicit_tls()) {
        if (auto secured = tls->start(*control); !secured) return fail_as(secured.error().exit, where + ": " + secured.error().message);
    }
    if (auto sent = send_first_command_early(*control, url, *tls); !sent)
        return fail_as(sent.error().exit, where + ": " + sent.error().message);
    auto greeting = control->read_reply();
    if (!greeting) return fail_as(greeting.error().exit, where + ": " + greeting.error().message);
    if (greeting->code != 220) return fail_as(ExitCode::connection, where + " did not greet: " + describe(*greeting));
    if (auto secured = tls->before_login(*control); !secured)
        return fail_as(secured.error().exit, where + ": " + secured.error().message);
    // FEAT before the login (RFC 2389 allows it; under TLS it comes after
    // AUTH TLS): what it says decides how the login goes.
    auto early = ask_features(*control, " before the login; asking again after it");
    if (!early) return fail_as(early.error().exit, where + ": " + early.error().message);
    const bool together = *early && (*early)->pipeline_max > 0;
    const bool takes_tickets = *early && (*early)->login_ticket;
    IssuedTicket issued;
    if (auto ok = login(*control, url, together, takes_tickets ? offered_tickets : nullptr, issued); !ok)
        return fail_as(ok.error().exit, where + ": " + ok.error().message);

    Session session{std::move(*control), {}, false};
    session.issued_ticket = std::move(issued);
    auto data = tls->protect_data(session.control, together && (*early)->auth_tls);
    if (!data) return fail_as(data.error().exit, where + ": " + data.error().message);
    session.protect_data = *data;
    session.tls_ctx = tls->context();
    session.tls_host = url.host;
    session.pinned_pubkey = options.pinned_pubkey;
    // rftpd lists the same before and after a login; other servers may list
    // more once a user is in, and are asked again.
    if (*early && (*early)->is_rftpd()) {
        session.features = **early;
    } else {
        auto late = ask_features(session.control, "; using plain RFC 959 commands");
        if (!late) return std::unexpected(late.error());
        if (*late) session.features = **late;
    }
    session.control_rtt_us = path_rtt_us(session.control.fd());
    return session;
}

void close_session(Session &session) {
    if (session.issued_ticket.shelf) session.issued_ticket.shelf->forget_if(session.issued_ticket.generation);
    // Kept data connections close first, from this side, so their TIME_WAIT
    // stays here and not on rftpd's passive ports (connection_end.h).
    session.kept_data.clear();
    // Lines sent ahead are answered first, so QUIT's reply is its own.
    (void)session.control.drain_ahead();
    if (session.control.send("QUIT")) (void)session.control.read_reply(5);
}

}  // namespace rftp::client
