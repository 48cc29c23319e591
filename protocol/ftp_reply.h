// FTP replies (RFC 959 §4.2): a three-digit code, then text. Multi-line
// replies are "123-first", any lines, "123 last". The daemon formats them,
// the client reads them back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rftp::ftp {

// Formats a reply; each '\n' in text starts a continuation line. Lines of a
// multi-line reply that happen to start with digits are indented by one space
// so a client can never mistake them for the final line.
std::string format_reply(int code, std::string_view text);

struct Reply {
    int code = 0;
    std::vector<std::string> lines;  // text of each line without code or separator

    bool positive_preliminary() const { return code >= 100 && code < 200; }
    bool positive_completion() const { return code >= 200 && code < 300; }
    std::string text() const;  // lines joined with '\n'
};

// Reassembles replies from the lines a server sends (line endings removed).
class ReplyAssembler {
public:
    enum class State { complete, need_more, malformed };
    State add_line(std::string_view line, Reply &out);

private:
    Reply pending_;
    bool in_multiline_ = false;
};

}  // namespace rftp::ftp
