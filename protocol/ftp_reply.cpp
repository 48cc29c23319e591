#include "protocol/ftp_reply.h"

#include <cctype>

namespace rftp::ftp {
namespace {

bool three_digits(std::string_view s) {
    return s.size() >= 3 && std::isdigit(static_cast<unsigned char>(s[0])) &&
           std::isdigit(static_cast<unsigned char>(s[1])) &&
           std::isdigit(static_cast<unsigned char>(s[2]));
}

}  // namespace

std::string format_reply(int code, std::string_view text) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    while (true) {
        std::size_t nl = text.find('\n', start);
        lines.push_back(text.substr(start, nl == std::string_view::npos ? nl : nl - start));
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    std::string code_str = std::to_string(code);
    std::string out;
    if (lines.size() == 1) return code_str + " " + std::string(lines[0]) + "\r\n";
    out += code_str + "-" + std::string(lines[0]) + "\r\n";
    for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
        if (three_digits(lines[i]) || lines[i].empty() || lines[i][0] != ' ') out += ' ';
        out += lines[i];
        out += "\r\n";
    }
    out += code_str + " " + std::string(lines.back()) + "\r\n";
    return out;
}

std::string Reply::text() const {
    std::string out;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i) out += '\n';
        out += lines[i];
    }
    return out;
}

ReplyAssembler::State ReplyAssembler::add_line(std::string_view line, Reply &out) {
    if (!in_multiline_) {
        if (!three_digits(line) || (line.size() > 3 && line[3] != ' ' && line[3] != '-'))
            return State::malformed;
        pending_ = Reply{};
        pending_.code = std::stoi(std::string(line.substr(0, 3)));
        pending_.lines.emplace_back(line.size() > 4 ? line.substr(4) : std::string_view{});
        if (line.size() > 3 && line[3] == '-') {
            in_multiline_ = true;
            return State::need_more;
        }
        out = std::move(pending_);
        return State::complete;
    }
    // Inside a multi-line reply only "<same code><space>" ends it.
    if (three_digits(line) && std::stoi(std::string(line.substr(0, 3))) == pending_.code &&
        (line.size() == 3 || line[3] == ' ')) {
        pending_.lines.emplace_back(line.size() > 4 ? line.substr(4) : std::string_view{});
        in_multiline_ = false;
        out = std::move(pending_);
        return State::complete;
    }
    pending_.lines.emplace_back(line);
    return State::need_more;
}

}  // namespace rftp::ftp
