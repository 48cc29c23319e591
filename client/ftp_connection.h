// The control connection: sends command lines, reads replies (multi-line
// ones reassembled) with an inactivity deadline. Every failure here means the
// session is unusable, so it is reported as a connection failure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "client/exit_codes.h"
#include "common/unique_fd.h"
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

    const std::string &peer() const { return peer_; }  // numeric server address
    int timeout() const { return timeout_; }
    int fd() const { return fd_.get(); }

private:
    UniqueFd fd_;
    std::string peer_;
    int timeout_ = 60;
    ftp::LineReader lines_;
    ftp::ReplyAssembler assembler_;
};

// "550 No such file." as one line for error messages.
std::string describe(const ftp::Reply &reply);

}  // namespace rftp::client
