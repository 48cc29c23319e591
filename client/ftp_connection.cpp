#include "client/ftp_connection.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "client/interrupt.h"
#include "client/tcp_dial.h"
#include "common/log.h"
#include "middleware/tls/client_context.h"
#include "middleware/tls/handshake.h"
#include "middleware/tls/tls_error.h"

namespace rftp::client {
namespace {

// A reply as the debug log shows it. A data token and a login ticket are
// secrets like the password, which is not shown either.
std::string shown(const ftp::Reply &reply) {
    for (const char *word : {"DATATOKEN", "TCKT"})
        if (reply.code == 200 && !reply.lines.empty() && reply.lines.front().starts_with(std::string(word) + " "))
            return std::string(word) + " ****";
    return reply.text();
}

}  // namespace

std::string describe(const ftp::Reply &reply) {
    std::string text = reply.lines.empty() ? "" : reply.lines.back();
    if (reply.lines.size() > 1 && !reply.lines.front().empty()) text = reply.lines.front();
    return std::to_string(reply.code) + " " + text;
}

ExitCode classify_refusal(const ftp::Reply &reply) {
    switch (reply.code) {
        // 521, 522, 534: the server's TLS rules, which no other file will meet either.
        case 421: case 425: case 521: case 522: case 534: return ExitCode::connection;
        case 426: case 451: return ExitCode::transfer;
        case 530: case 532: return ExitCode::auth;
        default: return ExitCode::remote_file;
    }
}

Outcome<FtpConnection> FtpConnection::open(const std::string &host, uint16_t port, int timeout_seconds) {
    auto dialed = tcp_dial(host, port, timeout_seconds);
    if (!dialed) return std::unexpected(dialed.error());
    FtpConnection c;
    c.fd_ = std::move(dialed->fd);
    c.peer_ = dialed->peer;
    c.timeout_ = timeout_seconds;
    return c;
}

bool ftp_can_carry(std::string_view text) {
    return text.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

OutcomeStatus FtpConnection::send(std::string_view line) { return send_lines({&line, 1}); }

// Every line in one write: lines sent ahead together reach the server in
// one segment, and it reads them with one call.
OutcomeStatus FtpConnection::send_lines(std::span<const std::string_view> lines) {
    std::string wire;
    for (std::string_view line : lines) {
        bool secret = line.starts_with("PASS ") || line.starts_with("ACCT ") || line.starts_with("TCKT ");
        if (!ftp_can_carry(line)) {
            if (secret)
                return fail_as(ExitCode::auth, "the password holds a line break or NUL byte, which FTP cannot send");
            return fail_as(ExitCode::usage, "cannot send '" + std::string(line.substr(0, line.find_first_of("\r\n"))) +
                                                "...' to an FTP server: the name holds a line break or NUL byte");
        }
        log::debug("--> " + (secret ? std::string(line.substr(0, 5)) + "****" : std::string(line)));
        wire.append(line).append("\r\n");
    }
    std::size_t done = 0;
    int waited_ms = 0;
    while (done < wire.size()) {
        ssize_t n = send_some(wire.data() + done, wire.size() - done);
        if (n == -EAGAIN || n == -EINTR) {
            if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
            if (waited_ms >= timeout_ * 1000)
                return fail_as(ExitCode::connection, "control connection: the server took no command for " +
                                                         std::to_string(timeout_) + " s");
            pollfd p{fd_.get(), POLLOUT, 0};
            ::poll(&p, 1, 250);
            waited_ms += 250;
            continue;
        }
        if (n < 0) return fail_as(ExitCode::connection, "control connection: send: " + io_failure(n));
        done += static_cast<std::size_t>(n);
    }
    return {};
}

std::string FtpConnection::io_failure(ssize_t n) const {
    if (n == -EPROTO && !tls_failure_.empty()) return "TLS: " + tls_failure_;
    return std::strerror(static_cast<int>(-n));
}

// Under TLS the socket does not block (tls() set it so), and OpenSSL's
// wants are waited out by the callers' poll loops.
ssize_t FtpConnection::send_some(const char *data, std::size_t len) {
    if (!ssl_) {
        ssize_t n = ::send(fd_.get(), data, len, MSG_NOSIGNAL);
        return n < 0 ? -errno : n;
    }
    int n = SSL_write(ssl_.get(), data, static_cast<int>(len));
    if (n > 0) return n;
    int err = SSL_get_error(ssl_.get(), n);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) return -EAGAIN;
    tls_failure_ = middleware::tls::openssl_failure("the TLS connection failed");
    return -EPROTO;
}

ssize_t FtpConnection::receive_some(char *buf, std::size_t len) {
    if (!ssl_) {
        ssize_t n = ::recv(fd_.get(), buf, len, 0);
        return n < 0 ? -errno : n;
    }
    int n = SSL_read(ssl_.get(), buf, static_cast<int>(len));
    if (n > 0) return n;
    int err = SSL_get_error(ssl_.get(), n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return -EAGAIN;
    if (err == SSL_ERROR_ZERO_RETURN) return 0;
    tls_failure_ = err == SSL_ERROR_SYSCALL ? "the server's TLS stream ended without close_notify"
                                            : middleware::tls::openssl_failure("the TLS connection failed");
    return -EPROTO;
}

OutcomeStatus FtpConnection::start_tls(SSL_CTX *ctx, const std::string &host, const std::string &pinned_pubkey) {
    // Bytes that came behind the 234 came in clear: taken as replies inside
    // TLS, they would let a man in the middle answer for the server.
    if (lines_.buffered() > 0)
        return fail_as(ExitCode::connection, "the server sent more behind its 234 reply, before TLS began; "
                                             "refusing it (it may have been injected)");
    auto ssl = middleware::tls::new_client_connection(ctx, host);
    if (!ssl) return fail_as(ExitCode::connection, ssl.error().message);
    if (auto shaken = middleware::tls::handshake(ssl->get(), fd_.get(), timeout_ * 1000, &interrupt_flag()); !shaken) {
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
        std::string why = shaken.error().code == -EPROTO ? middleware::tls::handshake_failure(ssl->get(), host, shaken.error().message)
                                                         : "TLS handshake with " + host + ": " + shaken.error().message;
        return fail_as(ExitCode::connection, why);
    }
    if (auto pinned = middleware::tls::check_pinned_key(ssl->get(), pinned_pubkey); !pinned)
        return fail_as(ExitCode::connection, pinned.error().message);
    ::fcntl(fd_.get(), F_SETFL, ::fcntl(fd_.get(), F_GETFL) | O_NONBLOCK);
    ssl_ = std::move(*ssl);
    log::info(std::string("TLS: ") + SSL_get_version(ssl_.get()) + " " + SSL_get_cipher_name(ssl_.get()) +
              ", certificate of " + host + " verified");
    return {};
}

Outcome<ftp::Reply> FtpConnection::read_reply() { return read_reply(timeout_); }

Outcome<ftp::Reply> FtpConnection::read_reply(int timeout_seconds) {
    if (auto settled = settle(); !settled) return std::unexpected(settled.error());
    return read_next_reply(timeout_seconds);
}

Outcome<ftp::Reply> FtpConnection::read_next_reply(int timeout_seconds) {
    int idle_ms = 0;
    for (;;) {
        std::string line;
        auto next = lines_.next(line);
        if (next == ftp::LineReader::Next::overlong)
            return fail_as(ExitCode::connection, "control connection: server sent an overlong line");
        if (next == ftp::LineReader::Next::line) {
            ftp::Reply reply;
            auto state = assembler_.add_line(line, reply);
            if (state == ftp::ReplyAssembler::State::malformed)
                return fail_as(ExitCode::connection, "control connection: malformed reply '" + line + "'");
            if (state == ftp::ReplyAssembler::State::complete) {
                log::debug("<-- " + std::to_string(reply.code) + " " + shown(reply));
                return reply;
            }
            continue;
        }
        // Poll in short slices so an interrupt is noticed even when the signal
        // went to another thread. TLS may hold decrypted bytes already.
        pollfd p{fd_.get(), POLLIN, 0};
        int r = ssl_ && SSL_pending(ssl_.get()) > 0 ? 1 : ::poll(&p, 1, 250);
        if (r < 0 && errno != EINTR)
            return fail_as(ExitCode::connection, std::string("control connection: poll: ") + std::strerror(errno));
        if (r <= 0) {
            if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
            idle_ms += 250;
            if (idle_ms >= timeout_seconds * 1000)
                return fail_as(ExitCode::connection, "control connection: no reply within " +
                                                         std::to_string(timeout_seconds) + " s");
            continue;
        }
        char buf[4096];
        ssize_t n = receive_some(buf, sizeof buf);
        if (n == -EINTR || n == -EAGAIN) continue;
        if (n < 0) return fail_as(ExitCode::connection, "control connection: " + io_failure(n));
        if (n == 0) return fail_as(ExitCode::connection, "control connection closed by server");
        idle_ms = 0;
        lines_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
}

Outcome<ftp::Reply> FtpConnection::command(std::string_view line) { return command(line, timeout_); }

Outcome<ftp::Reply> FtpConnection::command(std::string_view line, int timeout_seconds) {
    // Settings ahead are answered before it either way; a line sent now
    // goes before their replies are read, so it shares their round trip.
    auto asked = std::ranges::find_if(ahead_, [](const Ahead &a) { return !a.setting; });
    const bool sent_ahead = asked != ahead_.end() && asked->line == line;
    if (!sent_ahead) {
        if (has_lines_ahead())
            if (auto drained = drain_ahead(); !drained) return std::unexpected(drained.error());
        if (auto sent = send(line); !sent) return std::unexpected(sent.error());
    }
    if (auto settled = settle(); !settled) return std::unexpected(settled.error());
    if (sent_ahead) ahead_.pop_front();
    auto reply = read_next_reply(timeout_seconds);
    // 421 means the server is closing the session, whatever the command was.
    if (reply && reply->code == 421) return fail_as(ExitCode::connection, "server closed the session: " + describe(*reply));
    return reply;
}

OutcomeStatus FtpConnection::send_ahead(std::initializer_list<std::string_view> lines) {
    return send_ahead(std::span<const std::string_view>(lines.begin(), lines.size()));
}

OutcomeStatus FtpConnection::send_ahead(std::span<const std::string_view> lines) {
    if (auto sent = send_lines(lines); !sent) return sent;
    for (std::string_view line : lines) ahead_.push_back({std::string(line)});
    return {};
}

OutcomeStatus FtpConnection::send_setting_ahead(std::string_view line) {
    if (auto sent = send(line); !sent) return sent;
    ahead_.push_back({std::string(line), true});
    return {};
}

bool FtpConnection::has_lines_ahead() const {
    return std::ranges::any_of(ahead_, [](const Ahead &a) { return !a.setting; });
}

// A setting's refusal fails whatever read came next: the session is not
// what the caller took it to be. Its reply is read all the same, so the
// replies stay in step.
OutcomeStatus FtpConnection::settle() {
    while (!ahead_.empty() && ahead_.front().setting) {
        const std::string line = std::move(ahead_.front().line);
        ahead_.pop_front();
        auto reply = read_next_reply(timeout_);
        if (!reply) return std::unexpected(reply.error());
        if (!reply->positive_completion()) return fail_as(classify_refusal(*reply), line + ": " + describe(*reply));
    }
    return {};
}

bool FtpConnection::has_lines_ahead_for(std::string_view path) const {
    return std::ranges::any_of(ahead_, [path](const Ahead &a) {
        const std::string &line = a.line;
        const auto space = line.find(' ');
        return space != std::string::npos && std::string_view(line).substr(space + 1) == path;
    });
}

OutcomeStatus FtpConnection::drain_ahead() {
    while (!ahead_.empty()) {
        if (auto settled = settle(); !settled) return settled;
        if (ahead_.empty()) break;
        const std::string line = std::move(ahead_.front().line);
        ahead_.pop_front();
        auto reply = read_next_reply(timeout_);
        if (!reply) return std::unexpected(reply.error());
        log::debug("sent ahead and not wanted: " + line.substr(0, line.find(' ')) + ", answered " +
                   std::to_string(reply->code) + " " + shown(*reply));
        if (reply->code == 421) return fail_as(ExitCode::connection, "server closed the session: " + describe(*reply));
        if (!reply->positive_preliminary()) continue;
        abandoned_transfer_ = true;
        if (end_unwanted_) {
            // Its data connections closed, the transfer ends by itself:
            // 226 if it was sent already, else 426. Then each transfer
            // waiting behind it finds none (425) or fails as this one.
            end_unwanted_();
            if (auto read = read_next_reply(5); !read)
                return fail_as(ExitCode::connection, "end of a transfer sent ahead: " + read.error().message);
            continue;
        }
        // A transfer started for nobody: the server waits for the other
        // end of its data connections. ABOR ends it at once: its 426 (or
        // its own end, had it come first), then the ABOR's answer. As
        // abort_transfer, 5 s each: a server that keeps silent longer is
        // out of step, and so is the session.
        if (auto sent = send("ABOR"); !sent) return sent;
        for (int replies = 0; replies < 2; ++replies)
            if (auto read = read_next_reply(5); !read)
                return fail_as(ExitCode::connection, "ABOR of a transfer sent ahead: " + read.error().message);
    }
    return {};
}

}  // namespace rftp::client
