#include "client/ftp_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "client/interrupt.h"
#include "client/tcp_dial.h"
#include "common/log.h"

namespace rftp::client {

std::string describe(const ftp::Reply &reply) {
    std::string text = reply.lines.empty() ? "" : reply.lines.back();
    if (reply.lines.size() > 1 && !reply.lines.front().empty()) text = reply.lines.front();
    return std::to_string(reply.code) + " " + text;
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

OutcomeStatus FtpConnection::send(std::string_view line) {
    bool secret = line.starts_with("PASS ") || line.starts_with("ACCT ");
    if (!ftp_can_carry(line)) {
        if (secret) return fail_as(ExitCode::auth, "the password holds a line break or NUL byte, which FTP cannot send");
        return fail_as(ExitCode::usage, "cannot send '" + std::string(line.substr(0, line.find_first_of("\r\n"))) +
                                            "...' to an FTP server: the name holds a line break or NUL byte");
    }
    log::debug("--> " + (secret ? std::string(line.substr(0, 5)) + "****" : std::string(line)));
    std::string wire = std::string(line) + "\r\n";
    std::size_t done = 0;
    while (done < wire.size()) {
        ssize_t n = ::send(fd_.get(), wire.data() + done, wire.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR && !interrupted()) continue;
        if (n < 0) return fail_as(ExitCode::connection, std::string("control connection: send: ") + std::strerror(errno));
        done += static_cast<std::size_t>(n);
    }
    return {};
}

Outcome<ftp::Reply> FtpConnection::read_reply() { return read_reply(timeout_); }

Outcome<ftp::Reply> FtpConnection::read_reply(int timeout_seconds) {
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
                // A data token is a secret like the password, which is not shown either.
                const bool secret = reply.code == 200 && !reply.lines.empty() &&
                                    reply.lines.front().rfind("DATATOKEN ", 0) == 0;
                log::debug("<-- " + std::to_string(reply.code) + " " + (secret ? "DATATOKEN ****" : reply.text()));
                return reply;
            }
            continue;
        }
        // Poll in short slices so an interrupt is noticed even when the signal
        // went to another thread.
        pollfd p{fd_.get(), POLLIN, 0};
        int r = ::poll(&p, 1, 250);
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
        ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (n < 0) return fail_as(ExitCode::connection, std::string("control connection: ") + std::strerror(errno));
        if (n == 0) return fail_as(ExitCode::connection, "control connection closed by server");
        idle_ms = 0;
        lines_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
    }
}

Outcome<ftp::Reply> FtpConnection::command(std::string_view line) { return command(line, timeout_); }

Outcome<ftp::Reply> FtpConnection::command(std::string_view line, int timeout_seconds) {
    if (auto sent = send(line); !sent) return std::unexpected(sent.error());
    auto reply = read_reply(timeout_seconds);
    // 421 means the server is closing the session, whatever the command was.
    if (reply && reply->code == 421) return fail_as(ExitCode::connection, "server closed the session: " + describe(*reply));
    return reply;
}

}  // namespace rftp::client
