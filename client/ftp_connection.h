// The control connection: sends command lines, reads replies (multi-line
// ones reassembled) with an inactivity deadline. Every failure here means the
// session is unusable, so it is reported as a connection failure.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "client/exit_codes.h"
#include "common/unique_fd.h"
#include "middleware/tls/openssl_handles.h"
#include "protocol/ftp_command.h"
#include "protocol/ftp_reply.h"

namespace rftp::client {

// Whether text can be sent as (part of) one FTP command line: no CR, LF or
// NUL, which would end the command (a file named "a\nDELE b" would delete b)
// and which FTP has no way to quote.
bool ftp_can_carry(std::string_view text);

class FtpConnection {
public:
    static Outcome<FtpConnection> open(const std::string &host, uint16_t port, int timeout_seconds);

    OutcomeStatus send(std::string_view line);
    Outcome<ftp::Reply> read_reply();
    Outcome<ftp::Reply> read_reply(int timeout_seconds);
    Outcome<ftp::Reply> command(std::string_view line);
    // For a command whose reply may take longer than the usual timeout.
    Outcome<ftp::Reply> command(std::string_view line, int timeout_seconds);

    // Lines sent ahead (docs/protocol.md, "Files in a row"): sent now, in
    // one write, their replies read later, in order. command() with the
    // line next in that order only reads its reply. Any other command
    // first reads the replies to every line still ahead, and ends with
    // ABOR a transfer one of them started (its 150). send() and
    // read_reply() know nothing of them (but for settings, below): they are
    // for exchanges that come before the lines sent ahead are answered.
    OutcomeStatus send_ahead(std::initializer_list<std::string_view> lines);
    OutcomeStatus send_ahead(std::span<const std::string_view> lines);
    // A setting sent ahead (TYPE I): no command asks for its reply, which
    // is read on the way to the next one's, by command(), read_reply() or
    // drain_ahead(). Its refusal fails that read, named as the setting's.
    // So the setting and the next command share a round trip.
    OutcomeStatus send_setting_ahead(std::string_view line);
    // Lines ahead whose replies a command will ask for (not settings).
    bool has_lines_ahead() const;
    // Reads the replies to the lines sent ahead that no command will take.
    OutcomeStatus drain_ahead();
    // Whether a line sent ahead names path (its argument): the lines of
    // the file a per-file flow is about to move.
    bool has_lines_ahead_for(std::string_view path) const;
    // Whether a transfer started ahead was ended with ABOR since the last
    // call: rftpd then closed the connections it ran on.
    bool take_abandoned_transfer() { return std::exchange(abandoned_transfer_, false); }
    // How the lines sent ahead end a transfer they started and no command
    // wants: by closing the data connections it runs on (end), after which
    // rftpd ends it and any waiting behind it by itself, one final reply
    // each; or, without end, with ABOR. Several transfers sent ahead on
    // kept connections need end: rftpd may have run the next by the time
    // an ABOR arrives, and the ABOR's two replies would not be its.
    void set_unwanted_transfer_end(std::function<void()> end) { end_unwanted_ = std::move(end); }

    // TLS from here on (after AUTH TLS's 234, or at once for ftps://): the
    // handshake, the certificate checked against host, the pinned key.
    OutcomeStatus start_tls(SSL_CTX *ctx, const std::string &host, const std::string &pinned_pubkey);
    SSL *tls() const { return ssl_.get(); }

    const std::string &peer() const { return peer_; }  // numeric server address
    int timeout() const { return timeout_; }
    int fd() const { return fd_.get(); }

private:
    OutcomeStatus send_lines(std::span<const std::string_view> lines);
    // Sends or receives what it can; 0 from receive is the end of stream,
    // and a would-block is -EAGAIN.
    ssize_t send_some(const char *data, std::size_t len);
    ssize_t receive_some(char *buf, std::size_t len);
    // What a negative send_some/receive_some means, in words.
    std::string io_failure(ssize_t n) const;

    UniqueFd fd_;
    middleware::tls::UniqueSsl ssl_;
    std::string tls_failure_;  // OpenSSL's reason for the last -EPROTO
    std::string peer_;
    int timeout_ = 60;
    ftp::LineReader lines_;
    ftp::ReplyAssembler assembler_;
    // Reads the replies of the settings first in line.
    OutcomeStatus settle();
    Outcome<ftp::Reply> read_next_reply(int timeout_seconds);

    struct Ahead {
        std::string line;
        bool setting = false;  // send_setting_ahead's
    };
    std::deque<Ahead> ahead_;  // sent ahead, reply not yet read; oldest first
    bool abandoned_transfer_ = false;
    std::function<void()> end_unwanted_;
};

// "550 No such file." as one line for error messages.
std::string describe(const ftp::Reply &reply);

// Maps a negative reply to the exit code its meaning deserves (see exit_codes.h).
ExitCode classify_refusal(const ftp::Reply &reply);

}  // namespace rftp::client
