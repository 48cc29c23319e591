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

std::optional<std::string> root_path_problem(const std::string &root) {
    if (root.size() < 2 || root[0] != '/') return std::nullopt;
    // Every directory above the root, from "/" down ("/", "/srv", "/srv/ftp"
    // for /srv/ftp/alice); the root itself is the user's.
    const auto last = root.find_last_not_of('/');
    for (std::string::size_type slash = 0; slash < last; slash = root.find('/', slash + 1)) {
        const std::string dir = slash == 0 ? "/" : root.substr(0, slash);
        struct stat st {};
        if (::lstat(dir.c_str(), &st) != 0) return std::nullopt;  // not there yet
        if (auto other = other_writer(dir, st))
            return dir + " is " + other->who + ", who could put another directory in place of the root; " +
                   other->fix + ", or move the root";
    }
    return std::nullopt;
}

}  // namespace rftp::daemon
