#include "protocol/ftp_command.h"

#include <algorithm>
#include <cctype>

#include "common/ascii_case.h"

namespace rftp::ftp {

Result<Command> parse_command(std::string_view line) {
    if (line.size() + 2 > kMaxCommandLine) return fail_msg("Command line too long.");
    // Every C0 control byte and DEL: a name holding an escape sequence would
    // reach other users' terminals through listings and replies.
    for (unsigned char c : line)
        if (c < 0x20 || c == 0x7f) return fail_msg("Control characters not allowed.");

    std::size_t space = line.find(' ');
    std::string_view verb = line.substr(0, space);
    if (verb.empty() || verb.size() > 4 ||
        !std::all_of(verb.begin(), verb.end(), [](unsigned char c) { return std::isalpha(c); }))
        return fail_msg("Syntax error, command unrecognized.");

    Command cmd;
    cmd.verb = ascii_upper(verb);
    if (space != std::string_view::npos) cmd.argument = std::string(line.substr(space + 1));
    return cmd;
}

LineReader::Next LineReader::next(std::string &line) {
    for (;;) {
        std::size_t lf = buffer_.find('\n');
        if (discarding_) {
            if (lf == std::string::npos) {
                buffer_.clear();
                return Next::need_more;
            }
            buffer_.erase(0, lf + 1);
            discarding_ = false;
            continue;
        }
        if (lf == std::string::npos) {
            if (buffer_.size() >= kMaxCommandLine) {
                buffer_.clear();
                discarding_ = true;
                return Next::overlong;
            }
            return Next::need_more;
        }
        if (lf + 1 > kMaxCommandLine) {
            buffer_.erase(0, lf + 1);
            return Next::overlong;
        }
        std::size_t end = lf;
        if (end > 0 && buffer_[end - 1] == '\r') --end;
        line.assign(buffer_, 0, end);
        buffer_.erase(0, lf + 1);
        return Next::line;
    }
}

}  // namespace rftp::ftp
