#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace rftp::log {
namespace {

std::atomic<Level> g_threshold{Level::info};

// systemd sets JOURNAL_STREAM to "<device>:<inode>" of the stream it gave
// as stderr; a child that inherited the variable but writes elsewhere (a
// file, a terminal) must not prefix its lines with "<N>".
bool stderr_is_journal() {
    static const bool is_journal = [] {
        const char *value = std::getenv("JOURNAL_STREAM");
        struct stat st {};
        if (!value || ::fstat(STDERR_FILENO, &st) != 0) return false;
        unsigned long long dev = 0, ino = 0;
        if (std::sscanf(value, "%llu:%llu", &dev, &ino) != 2) return false;
        return dev == static_cast<unsigned long long>(st.st_dev) && ino == static_cast<unsigned long long>(st.st_ino);
    }();
    return is_journal;
}

const char *level_name(Level level) {
    switch (level) {
        case Level::error: return "error";
        case Level::warning: return "warning";
        case Level::notice: return "notice";
        case Level::info: return "info";
        case Level::debug: return "debug";
    }
    return "info";
}

constexpr char kHex[] = "0123456789abcdef";

bool is_control(unsigned char c) { return (c < ' ' && c != '\t') || c == 0x7f; }

// Text from the network reaches terminals through logs and messages; a
// control byte (an escape sequence, a carriage return) is shown, not obeyed.
void append_printable(std::string &out, char c) {
    auto u = static_cast<unsigned char>(c);
    if (!is_control(u)) {
        out += c;
        return;
    }
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
}

}  // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) append_printable(out, c);
    return out;
}

void set_threshold(Level level) { g_threshold.store(level); }
Level threshold() { return g_threshold.load(); }

bool parse_level(std::string_view name, Level &out) {
    for (Level l : {Level::error, Level::warning, Level::notice, Level::info, Level::debug}) {
        if (name == level_name(l)) {
            out = l;
            return true;
        }
    }
    return false;
}

void write(Level level, std::string_view line) {
    if (static_cast<int>(level) > static_cast<int>(g_threshold.load())) return;
    std::string out;
    out.reserve(line.size() + 16);
    if (stderr_is_journal()) {
        out += '<';
        out += static_cast<char>('0' + static_cast<int>(level));
        out += '>';
    } else {
        out += level_name(level);
        out += ": ";
    }
    for (char c : line) {
        if (c == '\n' || c == '\r') out += ' ';
        else append_printable(out, c);
    }
    out += '\n';
    // A short write to stderr is not worth more than one retry of the rest.
    ssize_t n = ::write(STDERR_FILENO, out.data(), out.size());
    if (n > 0 && static_cast<size_t>(n) < out.size())
        (void)!::write(STDERR_FILENO, out.data() + n, out.size() - n);
}

std::string quote(std::string_view value) {
    bool needs = value.empty();
    for (unsigned char c : value)
        if (c <= ' ' || c == '"' || c == '\\' || c == '=' || c == 0x7f) needs = true;
    if (!needs) return std::string(value);
    std::string out = "\"";
    for (unsigned char c : value) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < ' ' || c == 0x7f) {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    out += '"';
    return out;
}

}  // namespace rftp::log
