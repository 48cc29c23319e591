#include "daemon/commands/command_support.h"

#include <cerrno>
#include <charconv>

#include "daemon/session/session.h"
#include "daemon/vfs/user_root.h"

namespace rftp::daemon {

std::optional<std::string> resolve_or_reply(Session &s, const std::string &argument) {
    auto vpath = resolve_virtual_path(s.state.cwd, argument);
    if (!vpath) {
        if (vpath.error().code == -ENAMETOOLONG) s.reply(553, "File name too long.");
        else s.reply(553, "File name not allowed: " + vpath.error().message);
        return std::nullopt;
    }
    return *vpath;
}

void reply_fs_error(Session &s, const Error &e) {
    switch (-e.code) {
        case ENOENT: s.reply(550, "No such file or directory."); return;
        case EACCES:
        case EPERM:
        case EROFS: s.reply(550, "Permission denied."); return;
        case EEXIST: s.reply(550, "File exists."); return;
        case ENOTEMPTY: s.reply(550, "Directory not empty."); return;
        case ENOTDIR: s.reply(550, "Not a directory."); return;
        case EISDIR: s.reply(550, "Is a directory."); return;
        case EXDEV:
        case ELOOP: s.reply(550, "Path not allowed: it leaves your root directory or loops."); return;
        case ENAMETOOLONG: s.reply(553, "File name too long."); return;
        case ENOSPC:
        case EDQUOT: s.reply(452, "Insufficient storage space."); return;
        case EBUSY: s.reply(550, "Resource busy."); return;
        default: s.reply(550, "Requested action not taken: " + e.message + ".");
    }
}

std::string quote_257(const std::string &path) {
    std::string out = "\"";
    for (char c : path) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

bool parse_decimal(const std::string &text, uint64_t max, uint64_t &out) {
    if (text.empty() || text.size() > 20) return false;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && p == text.data() + text.size() && out <= max;
}

}  // namespace rftp::daemon
