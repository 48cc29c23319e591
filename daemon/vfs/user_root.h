// A user's view of the file system. Every path a client sends is first made a
// normalized virtual path ("/" is the user's root), then opened relative to a
// directory fd of the root with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS),
// so "..", absolute symlinks and symlinks pointing outside can never reach a
// file outside the root, even if the tree changes while we look (no race).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"

namespace rftp::daemon {

// Joins arg to cwd (both virtual) and normalizes: collapses "//" and ".",
// applies ".." lexically and never above "/". Fails on an empty argument, a
// NUL byte, a component longer than NAME_MAX or a path longer than PATH_MAX.
// Returns an absolute virtual path such as "/" or "/data/run1".
Result<std::string> resolve_virtual_path(std::string_view cwd, std::string_view arg);

// The names rftpd keeps an upload's partial file and journal under
// (protocol/partial_names.h) are its own: no client may create or rename
// onto one, or it could swap the file another session's upload is about to
// commit. Why such a name is refused, for the reply:
inline constexpr const char *kUploadBookkeepingRule = "names ending in .rftp-part or .rftp-resume are rftpd's own";

struct DirEntry {
    std::string name;
    struct stat st {};
};

// A configured root's real path: its symbolic links resolved, once, when
// rftpd starts (a root missing then is returned as given). The config may
// reach a root through links; UserRoot::open then refuses any link on the
// way, so one a local user makes later (in /home/alice, for a root
// /home/alice/ftp) cannot point a login at another directory.
std::string root_as_resolved_at_start(const std::string &configured);

class UserRoot {
public:
    // Opens the root directory, refusing a symbolic link anywhere on its
    // path (root_as_resolved_at_start). writable=false makes every mutating
    // call fail with EACCES.
    static Result<UserRoot> open(const std::string &root_dir, bool writable);

    UserRoot(UserRoot &&) = default;
    UserRoot &operator=(UserRoot &&) = default;

    bool writable() const { return writable_; }

    // vpath must come from resolve_virtual_path. flags as for open(2); O_CREAT
    // and write access need a writable root. Never follows a symlink out of the root.
    Result<UniqueFd> open_file(const std::string &vpath, int flags, mode_t mode = 0644) const;
    Result<UniqueFd> open_directory(const std::string &vpath) const;
    Result<struct stat> stat(const std::string &vpath) const;
    // Like lstat(2): the entry itself, a symlink not followed (RNFR, and
    // telling "absent" from "present but pointing outside").
    Result<struct stat> stat_entry(const std::string &vpath) const;

    // Entries of a directory, without "." and "..", sorted by name; entries
    // that vanish while listing are skipped. More than at_most of them fail
    // with -E2BIG as soon as one more is read, not after all.
    Result<std::vector<DirEntry>> list(const std::string &vpath, std::size_t at_most = SIZE_MAX) const;

    Status make_directory(const std::string &vpath, mode_t mode = 0755) const;
    Status remove_directory(const std::string &vpath) const;
    Status remove_file(const std::string &vpath) const;
    // Sets a plain file's modification time (MFMT); its access time is left
    // alone. A symbolic link or a directory is refused with EISDIR/ELOOP.
    Status set_modification_time(const std::string &vpath, const struct timespec &mtime) const;
    // Atomic rename (renameat); replaces an existing file at to, as rename(2) does.
    Status rename(const std::string &from, const std::string &to) const;

private:
    UserRoot(UniqueFd fd, bool writable) : root_(std::move(fd)), writable_(writable) {}
    // Opens the directory holding vpath's last component; leaf receives that
    // component, which is never empty, "." or "..".
    Result<UniqueFd> open_parent(const std::string &vpath, std::string &leaf) const;

    UniqueFd root_;
    bool writable_ = false;
};

}  // namespace rftp::daemon
