#include "client/data_connection.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "client/interrupt.h"
#include "client/tcp_dial.h"
#include "common/log.h"
#include "middleware/tls/client_context.h"
#include "middleware/tls/handshake.h"
#include "middleware/tls/kernel_tls.h"
#include "protocol/data_token.h"
#include "protocol/host_port.h"

namespace rftp::client {
namespace {

Outcome<uint16_t> passive_port(Session &session) {
    if (!session.epsv_refused) {
        auto reply = session.control.command("EPSV");
        if (!reply) return std::unexpected(reply.error());
        if (reply->code == 229) {
            auto port = ftp::parse_epsv_reply(reply->text());
            if (!port) return fail_as(ExitCode::connection, "EPSV: " + port.error().message);
            return *port;
        }
        log::info("EPSV refused (" + describe(*reply) + "), falling back to PASV");
        session.epsv_refused = true;
    }
    auto reply = session.control.command("PASV");
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 227) return fail_as(ExitCode::connection, "no passive mode: " + describe(*reply));
    auto ep = ftp::parse_pasv_reply(reply->text());
    if (!ep) return fail_as(ExitCode::connection, "PASV: " + ep.error().message);
    return ep->port;
}

// Asks rftpd, once per session and before its first data connection, for
// the session's data token, so another program that connects to a passive
// port first cannot take a download or feed an upload. A refusal is no
// failure: data connections then go without. A 200 rftp cannot read is:
// rftpd would then serve no data connection without a token.
OutcomeStatus take_data_token(Session &session) {
    session.data_token_asked = true;
    auto reply = session.control.command("OPTS DATATOKEN");
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 200) {
        log::warning("the server offers DATATOKEN but gave none (" + describe(*reply) +
                     "); data connections go without it");
        return {};
    }
    auto token = wire::parse_data_token_reply(reply->text());
    if (!token)
        return fail_as(ExitCode::connection, "OPTS DATATOKEN: the server's answer holds no token (" +
                                                 token.error().message + "): " + describe(*reply));
    session.data_token = *token;
    return {};
}

// The session's data token, first on a new data connection: rftpd serves
// the connection only once it has seen it (protocol/data_token.h).
OutcomeStatus show_data_token(int fd, const wire::Token &token) {
    const auto header = wire::data_token_header(token);
    std::size_t sent = 0;
    while (sent < header.size()) {
        ssize_t n = ::send(fd, header.data() + sent, header.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR && !interrupted()) continue;
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
        if (n < 0) return fail_as(ExitCode::connection, std::string("sending the data token: ") + std::strerror(errno));
        sent += static_cast<std::size_t>(n);
    }
    return {};
}

bool will_take_data_token(const Session &session) {
    return session.features.data_token && session.features.is_rftpd() && !session.data_token_asked &&
           !session.protect_data;
}

}  // namespace

OutcomeStatus send_data_setup_ahead(Session &session) {
    if (!session.features.is_rftpd() || session.epsv_refused) return {};
    if (!will_take_data_token(session)) return session.control.send_ahead({"EPSV"});
    return session.control.send_ahead({"OPTS DATATOKEN", "EPSV"});
}

Outcome<std::vector<UniqueFd>> open_data_connections(Session &session, unsigned count) {
    // EPSV or PASV ends the kept connections, on rftpd's side too
    // (docs/protocol.md); closed here first, their TIME_WAIT stays here.
    session.kept_data.clear();
    // Only rftpd's DATATOKEN is known to mean this. Under PROT P the TLS
    // session binds each connection instead, and the token would cross in
    // clear before that TLS began. Its EPSV goes in the same write, unless
    // both went ahead already (with the session's first OPTS PARALLEL).
    if (will_take_data_token(session)) {
        if (!session.control.has_lines_ahead())
            if (auto sent = send_data_setup_ahead(session); !sent) return std::unexpected(sent.error());
        if (auto taken = take_data_token(session); !taken) return std::unexpected(taken.error());
    }
    auto port = passive_port(session);
    if (!port) return std::unexpected(port.error());
    auto socks = tcp_dial_together(session.control.peer(), *port, count, session.control.timeout());
    if (!socks) return std::unexpected(socks.error());
    if (session.data_token && !session.protect_data)
        for (auto &sock : *socks)
            if (auto shown = show_data_token(sock.get(), *session.data_token); !shown)
                return std::unexpected(shown.error());
    return socks;
}

Outcome<DataTlsRelays> secure_data_connections(Session &session, std::vector<UniqueFd> &connections) {
    DataTlsRelays relays;
    if (!session.protect_data) return relays;
    // The newest session the control connection holds: under TLS 1.3 its
    // tickets come after the handshake, with the first replies.
    middleware::tls::UniqueSslSession resumable(SSL_get1_session(session.control.tls()));
    const int timeout_ms = session.control.timeout() * 1000;
    for (std::size_t i = 0; i < connections.size(); ++i) {
        const std::string which = "data connection " + std::to_string(i + 1) + "/" + std::to_string(connections.size());
        // Each connection resumes a copy: OpenSSL marks the session a
        // connection holds as not resumable when that connection is freed
        // without its close_notify sent (a download's end), and the next
        // file's connections would then not resume at all.
        middleware::tls::UniqueSslSession copy(resumable ? SSL_SESSION_dup(resumable.get()) : nullptr);
        auto ssl = middleware::tls::new_client_connection(session.tls_ctx.get(), session.tls_host, copy.get());
        if (!ssl) return fail_as(ExitCode::connection, which + ": " + ssl.error().message);
        middleware::tls::offer_kernel_tls(ssl->get());
        if (auto shaken = middleware::tls::handshake(ssl->get(), connections[i].get(), timeout_ms, &interrupt_flag());
            !shaken) {
            if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
            std::string why = shaken.error().code == -EPROTO
                                  ? middleware::tls::handshake_failure(ssl->get(), session.tls_host, shaken.error().message)
                                  : shaken.error().message;
            return fail_as(ExitCode::connection, which + ": TLS: " + why);
        }
        // A full handshake showed the certificate anew (servers that do not
        // bind data to the login take one): the pin holds for it too.
        if (!SSL_session_reused(ssl->get()))
            if (auto pinned = middleware::tls::check_pinned_key(ssl->get(), session.pinned_pubkey); !pinned)
                return fail_as(ExitCode::connection, which + ": " + pinned.error().message);
        auto relay = middleware::tls::TlsRelay::start(std::move(*ssl), std::move(connections[i]),
                                                      static_cast<unsigned>(session.control.timeout()));
        if (!relay) return fail_as(ExitCode::connection, which + ": " + relay.error().message);
        relays.push_back(std::move(*relay));
    }
    log::debug("PROT P: " + std::to_string(relays.size()) + " data connection(s) under TLS");
    return relays;
}

Outcome<std::string> read_all(int fd, std::size_t max_bytes) {
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR && !interrupted()) continue;
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
        if (n < 0) return fail_as(ExitCode::transfer, std::string("data connection: ") + std::strerror(errno));
        if (n == 0) return out;
        if (static_cast<std::size_t>(n) > max_bytes - out.size())
            return fail_as(ExitCode::remote_file, "the server sent more than " + std::to_string(max_bytes >> 20) +
                                                      " MiB of listing; rftp stopped reading it");
        out.append(buf, static_cast<std::size_t>(n));
    }
}

}  // namespace rftp::client
