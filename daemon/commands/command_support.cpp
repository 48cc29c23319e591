#include "daemon/commands/command_support.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

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

FtpReply fs_error_reply(const Error &e) {
    switch (-e.code) {
        case ENOENT: return {550, "No such file or directory."};
        case EACCES:
        case EPERM:
        case EROFS: return {550, "Permission denied."};
        case EEXIST: return {550, "File exists."};
        case ENOTEMPTY: return {550, "Directory not empty."};
        case ENOTDIR: return {550, "Not a directory."};
        case EISDIR: return {550, "Is a directory."};
        case EXDEV:
        case ELOOP: return {550, "Path not allowed: it leaves your root directory or loops."};
        case ENAMETOOLONG: return {553, "File name too long."};
        case ENOSPC:
        case EDQUOT: return {452, "Insufficient storage space."};
        case EBUSY: return {550, "Resource busy."};
        default: return {550, "Requested action not taken: " + e.message + "."};
    }
}

void reply_fs_error(Session &s, const Error &e) {
    FtpReply r = fs_error_reply(e);
    s.reply(r.code, r.text);
}

std::string quote_257(const std::string &path) {
    std::string out = "\"";
    for (char c : path) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

PendingTransfer take_pending_transfer(Session &s) {
    PendingTransfer p{s.state.restart_offset, s.state.allocate_size, std::move(s.state.upload_source),
                      s.state.hold_next_upload};
    s.state.restart_offset = 0;
    s.state.allocate_size.reset();
    s.state.upload_source.reset();
    s.state.hold_next_upload = false;
    return p;
}

std::optional<RetrieveSource> open_for_retrieve(Session &s, const std::string &vpath, uint64_t rest) {
    auto fd = s.state.root->open_file(vpath, O_RDONLY | O_CLOEXEC);
    if (!fd) {
        reply_fs_error(s, fd.error());
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        s.reply(550, "Not a plain file.");
        return std::nullopt;
    }
    RetrieveSource src{std::move(*fd), static_cast<uint64_t>(st.st_size)};
    if (rest > src.size) {
        s.reply(554, "Restart offset beyond the end of the file.");
        return std::nullopt;
    }
    return src;
}

}  // namespace rftp::daemon
