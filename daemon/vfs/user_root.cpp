#include "daemon/vfs/user_root.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "daemon/vfs/open_beneath.h"

namespace rftp::daemon {
namespace {

std::unexpected<Error> read_only(std::string_view op, std::string_view vpath) {
    return fail_msg(std::string(op) + " " + std::string(vpath) + ": read-only access", -EACCES);
}

bool wants_to_modify(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE)) != 0;
}

struct DirCloser {
    void operator()(DIR *d) const { ::closedir(d); }
};

}  // namespace

std::string root_as_resolved_at_start(const std::string &configured) {
    // The longest part of the path that exists is resolved; the rest (a
    // storage mount not there yet) follows as written.
    std::string head = configured, rest;
    for (;;) {
        std::unique_ptr<char, decltype(&::free)> real(::realpath(head.c_str(), nullptr), &::free);
        if (real) return std::string(real.get()) == "/" && !rest.empty() ? rest : real.get() + rest;
        if (errno != ENOENT && errno != ENOTDIR) return configured;
        const auto slash = head.find_last_of('/');
        if (slash == std::string::npos || head == "/") return configured;
        rest = head.substr(slash) + rest;
        head = slash == 0 ? "/" : head.substr(0, slash);
    }
}

Result<UserRoot> UserRoot::open(const std::string &root_dir, bool writable) {
    // Everything beneath the root is resolved by the kernel with
    // RESOLVE_BENEATH; the root's own path must hold no link at all.
    struct open_how how {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    long fd;
    do fd = ::syscall(SYS_openat2, AT_FDCWD, root_dir.c_str(), &how, sizeof how);
    while (fd < 0 && (errno == EINTR || errno == EAGAIN));
    if (fd < 0 && errno == ELOOP)
        return fail_msg("user root " + root_dir + " is reached through a symbolic link that was not there when rftpd "
                        "started (made since, or in a part of the path missing then); restart rftpd if the link is "
                        "meant to be there",
                        -ELOOP);
    if (fd < 0) return fail_errno("user root " + root_dir);
    return UserRoot(UniqueFd(static_cast<int>(fd)), writable);
}

Result<UniqueFd> UserRoot::open_file(const std::string &vpath, int flags, mode_t mode) const {
    if (!writable_ && wants_to_modify(flags)) return read_only("open", vpath);

    // O_NONBLOCK so a FIFO in the tree cannot hang the caller in open(2);
    // device nodes and FIFOs are then refused below, and the flag is cleared
    // again if the caller did not ask for it (it means nothing for files).
    auto fd = open_beneath(root_.get(), vpath, static_cast<unsigned>(flags) | O_NOCTTY | O_NONBLOCK, mode);
    if (!fd) return fd;
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return fail_errno("stat " + vpath);
    if (S_ISDIR(st.st_mode)) return fail_msg("open " + vpath + ": is a directory", -EISDIR);
    if (!S_ISREG(st.st_mode)) return fail_msg("open " + vpath + ": not a regular file", -EINVAL);
    if (!(flags & O_NONBLOCK)) {
        const int fl = ::fcntl(fd->get(), F_GETFL);
        if (fl < 0 || ::fcntl(fd->get(), F_SETFL, fl & ~O_NONBLOCK) != 0) return fail_errno("open " + vpath);
    }
    return fd;
}

Result<UniqueFd> UserRoot::open_directory(const std::string &vpath) const {
    return open_beneath(root_.get(), vpath, O_RDONLY | O_DIRECTORY);
}

Result<struct stat> UserRoot::stat(const std::string &vpath) const {
    // O_PATH needs no read permission on the file, only search on the path,
    // like stat(2); symlinks are followed only while they stay beneath the root.
    auto fd = open_beneath(root_.get(), vpath, O_PATH);
    if (!fd) return fail(fd.error());
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) return fail_errno("stat " + vpath);
    return st;
}

Result<struct stat> UserRoot::stat_entry(const std::string &vpath) const {
    if (vpath == "/") return stat(vpath);
    std::string leaf;
    auto parent = open_parent(vpath, leaf);
    if (!parent) return fail(parent.error());
    struct stat st {};
    if (::fstatat(parent->get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return fail_errno("stat " + vpath);
    return st;
}

Result<std::vector<DirEntry>> UserRoot::list(const std::string &vpath, std::size_t at_most) const {
    auto fd = open_directory(vpath);
    if (!fd) return fail(fd.error());
    // fdopendir takes over a descriptor of its own, so our fd keeps its RAII owner.
    UniqueFd dir_fd(::dup(fd->get()));
    if (!dir_fd) return fail_errno("list " + vpath);
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(dir_fd.get()));
    if (!dir) return fail_errno("list " + vpath);
    dir_fd.release();

    std::vector<DirEntry> entries;
    for (;;) {
        errno = 0;
        const struct dirent *e = ::readdir(dir.get());
        if (e == nullptr) {
            if (errno != 0) return fail_errno("list " + vpath);
            break;
        }
        const std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (entries.size() == at_most) return fail_msg("list " + vpath + ": more than " + std::to_string(at_most) + " entries", -E2BIG);
        DirEntry entry{std::string(name), {}};
        // Not following symlinks: a listing shows the link, never facts about
        // a target that may lie outside the root.
        if (::fstatat(fd->get(), e->d_name, &entry.st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;  // removed while we listed
            return fail_errno("list " + vpath + ": " + std::string(name));
        }
        entries.push_back(std::move(entry));
    }
    std::sort(entries.begin(), entries.end(), [](const DirEntry &a, const DirEntry &b) { return a.name < b.name; });
    return entries;
}

Result<UniqueFd> UserRoot::open_parent(const std::string &vpath, std::string &leaf) const {
    const size_t slash = vpath.rfind('/');
    if (vpath.empty() || vpath.front() != '/' || slash == std::string::npos) {
        return fail_msg(vpath + ": not a virtual path", -EINVAL);
    }
    leaf = vpath.substr(slash + 1);
    if (leaf.empty()) return fail_msg(vpath + ": not allowed on the root directory", -EPERM);
    if (leaf == "." || leaf == "..") return fail_msg(vpath + ": not a normalized path", -EINVAL);
    // O_PATH is enough for the *at calls and needs no read permission.
    const std::string parent = slash == 0 ? std::string("/") : vpath.substr(0, slash);
    return open_beneath(root_.get(), parent, O_PATH | O_DIRECTORY);
}

// The *at calls below act on the leaf itself and never follow a symlink in
// it, so a symlink leaf is created, removed or renamed as a link.

Status UserRoot::make_directory(const std::string &vpath, mode_t mode) const {
    if (!writable_) return read_only("mkdir", vpath);
    std::string leaf;
    auto parent = open_parent(vpath, leaf);
    if (!parent) return fail(parent.error().with_context("mkdir"));
    if (::mkdirat(parent->get(), leaf.c_str(), mode) != 0) return fail_errno("mkdir " + vpath);
    return {};
}

Status UserRoot::remove_directory(const std::string &vpath) const {
    if (!writable_) return read_only("rmdir", vpath);
    std::string leaf;
    auto parent = open_parent(vpath, leaf);
    if (!parent) return fail(parent.error().with_context("rmdir"));
    if (::unlinkat(parent->get(), leaf.c_str(), AT_REMOVEDIR) != 0) return fail_errno("rmdir " + vpath);
    return {};
}

Status UserRoot::remove_file(const std::string &vpath) const {
    if (!writable_) return read_only("delete", vpath);
    std::string leaf;
    auto parent = open_parent(vpath, leaf);
    if (!parent) return fail(parent.error().with_context("delete"));
    if (::unlinkat(parent->get(), leaf.c_str(), 0) != 0) return fail_errno("delete " + vpath);
    return {};
}

Status UserRoot::set_modification_time(const std::string &vpath, const struct timespec &mtime) const {
    if (!writable_) return read_only("set the time of", vpath);
    std::string leaf;
    auto parent = open_parent(vpath, leaf);
    if (!parent) return fail(parent.error().with_context("set time"));
    struct stat st {};
    if (::fstatat(parent->get(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return fail_errno("set time " + vpath);
    if (S_ISLNK(st.st_mode)) return fail(Error{-ELOOP, "set time " + vpath + ": a symbolic link"});
    if (!S_ISREG(st.st_mode)) return fail(Error{-EISDIR, "set time " + vpath + ": not a plain file"});
    // The name within its directory (opened beneath the root), never
    // followed: a link swapped in after the check gets its own time, and
    // nothing outside the root changes.
    const struct timespec times[2] = {{0, UTIME_OMIT}, mtime};
    if (::utimensat(parent->get(), leaf.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) return fail_errno("set time " + vpath);
    return {};
}

Status UserRoot::rename(const std::string &from, const std::string &to) const {
    if (!writable_) return read_only("rename", from);
    std::string from_leaf, to_leaf;
    auto from_parent = open_parent(from, from_leaf);
    if (!from_parent) return fail(from_parent.error().with_context("rename"));
    auto to_parent = open_parent(to, to_leaf);
    if (!to_parent) return fail(to_parent.error().with_context("rename"));
    if (::renameat(from_parent->get(), from_leaf.c_str(), to_parent->get(), to_leaf.c_str()) != 0) {
        return fail_errno("rename " + from + " to " + to);
    }
    return {};
}

}  // namespace rftp::daemon
