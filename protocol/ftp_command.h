// The FTP command grammar (RFC 959 §5.3): a verb of letters, an optional
// single space and argument, ended by CRLF. The parser only splits and checks
// the shape of a line; what an argument means is for the command's handler.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::ftp {

// Longest control line accepted, CRLF included. vsftpd uses the same bound;
// it leaves room for PATH_MAX-sized arguments.
inline constexpr std::size_t kMaxCommandLine = 4096;

struct Command {
    std::string verb;      // upper-cased, 3 or 4 letters (RFC 959), e.g. "RETR"
    std::string argument;  // everything after the first space, as sent; may be empty
};

// Parses one line with its line ending already removed. Fails with a message
// fit for a 500/501 reply when the verb is not letters, the line holds a NUL
// or other control byte, or it is too long.
Result<Command> parse_command(std::string_view line);

// Pulls complete lines out of a byte stream. A line ends at LF (a bare LF is
// accepted, as most servers do); a trailing CR is dropped. Lines longer than
// kMaxCommandLine are reported once as overlong and then skipped to their end,
// so one bad line never desynchronises the session.
class LineReader {
public:
    enum class Next { line, overlong, need_more };

    void feed(std::string_view bytes) { buffer_.append(bytes); }
    Next next(std::string &line);
    // Bytes fed and not yet taken as lines.
    std::size_t buffered() const { return buffer_.size(); }

private:
    std::string buffer_;
    bool discarding_ = false;
};

}  // namespace rftp::ftp
