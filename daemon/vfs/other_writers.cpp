#include "daemon/vfs/other_writers.h"

#include <unistd.h>

#include <cstdio>

namespace rftp::daemon {

std::optional<OtherWriter> other_writer(const std::string &path, const struct stat &st) {
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
        return OtherWriter{"owned by uid " + std::to_string(st.st_uid) + ", neither root nor the user rftpd runs as",
                           "chown root " + path};
    if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX)) return std::nullopt;
    // A group's write is root's or rftpd's own where the group is theirs: a
    // umask of 002 gives a user's files their private group.
    const bool group_may_write = (st.st_mode & S_IWGRP) && st.st_gid != 0 && st.st_gid != ::getegid();
    if (!(st.st_mode & S_IWOTH) && !group_may_write) return std::nullopt;
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    const std::string by = (st.st_mode & S_IWOTH) ? "anyone" : "group " + std::to_string(st.st_gid);
    return OtherWriter{"writable by " + by + " (mode " + mode + ")", "chmod go-w " + path};
}

namespace {

// Who besides root and rftpd may add an entry to dir, the sticky bit
// notwithstanding: it keeps others from replacing an entry, not from
// making one that is missing.
std::optional<std::string> who_may_create_in(const struct stat &dir) {
    if (dir.st_mode & S_IWOTH) return "anyone";
    if ((dir.st_mode & S_IWGRP) && dir.st_gid != 0 && dir.st_gid != ::getegid())
        return "group " + std::to_string(dir.st_gid);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> root_path_problem(const std::string &root) {
    if (root.size() < 2 || root[0] != '/') return std::nullopt;
    // Every directory above the root, from "/" down ("/", "/srv", "/srv/ftp"
    // for /srv/ftp/alice), then the root itself, only to see it is there.
    const auto last = root.find_last_not_of('/');
    std::string parent;
    struct stat parent_st {};
    for (std::string::size_type slash = 0;; slash = root.find('/', slash + 1)) {
        const bool is_root = slash == std::string::npos || slash > last;
        const std::string dir = is_root ? root : slash == 0 ? "/" : root.substr(0, slash);
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) {
            // Not there yet: whoever may create it in its parent will own it.
            auto who = parent.empty() ? std::nullopt : who_may_create_in(parent_st);
            if (!who) return std::nullopt;
            return dir + " does not exist yet, and " + parent + " lets " + *who +
                   " create it and so choose the root's contents; create it now (owned by root or rftpd), "
                   "or move the root";
        }
        if (is_root) return std::nullopt;  // the root itself is the user's
        if (auto other = other_writer(dir, st))
            return dir + " is " + other->who + ", who could put another directory in place of the root; " +
                   "move the root, or " + other->fix;
        parent = dir;
        parent_st = st;
    }
}

}  // namespace rftp::daemon
