#include "common/log.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "common/hex.h"

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

bool is_control(unsigned char c) { return (c < ' ' && c != '\t') || c == 0x7f; }

void append_hex(std::string &out, unsigned char u) {
    out += "\\x";
    out += kHexDigits[u >> 4];
    out += kHexDigits[u & 15];
}

// Text from the network reaches terminals through logs and messages; a
// control byte (an escape sequence, a carriage return) is shown, not obeyed.
void append_printable(std::string &out, char c) {
    auto u = static_cast<unsigned char>(c);
    if (is_control(u)) append_hex(out, u);
    else out += c;
}

// The length of the well-formed UTF-8 character at text[i] (2 to 4 bytes),
// or 0: a stray byte, an overlong or surrogate form, or a C1 control
// (U+0080..U+009F, which terminals obey). journalctl shows a message with
// one such byte as "[N blob data]", so a client could hide its own lines.
std::size_t utf8_character(std::string_view text, std::size_t i) {
    auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = at(i);
    std::size_t n = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xC2 && lead <= 0xDF ? 2 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((at(i + k) & 0xC0) != 0x80) return 0;
    const unsigned char second = at(i + 1);
    if (lead == 0xC2 && second <= 0x9F) return 0;              // C1 controls
    if (lead == 0xE0 && second < 0xA0) return 0;               // overlong
    if (lead == 0xED && second > 0x9F) return 0;               // surrogates
    if (lead == 0xF0 && second < 0x90) return 0;               // overlong
    if (lead == 0xF4 && second > 0x8F) return 0;               // beyond U+10FFFF
    return n;
}

// Appends what text[i] begins (escaped where it is no printable character)
// and returns where the next one begins.
std::size_t append_shown(std::string &out, std::string_view text, std::size_t i) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
        append_printable(out, text[i]);
        return i + 1;
    }
    if (std::size_t n = utf8_character(text, i)) {
        out.append(text.substr(i, n));
        return i + n;
    }
    append_hex(out, u);
    return i + 1;
}

}  // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) i = append_shown(out, text, i);
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
    // Whatever a client sent, the line stays one line of text the journal
    // shows: breaks become spaces, anything else unprintable \xNN.
    for (std::size_t i = 0; i < line.size();) {
        if (line[i] == '\n' || line[i] == '\r') {
            out += ' ';
            ++i;
        } else {
            i = append_shown(out, line, i);
        }
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
        if (c <= ' ' || c == '"' || c == '\\' || c == '=' || c >= 0x7f) needs = true;
    if (!needs) return std::string(value);
    std::string out = "\"";
    for (std::size_t i = 0; i < value.size();) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c < ' ' || c == 0x7f) {
            append_hex(out, c);
            ++i;
        } else {
            i = append_shown(out, value, i);
        }
    }
    out += '"';
    return out;
}

}  // namespace rftp::log
