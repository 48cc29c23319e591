#include "client/sync/local_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "client/batch/tree_bounds.h"
#include "common/unique_fd.h"
#include "protocol/partial_names.h"

namespace rftp::client {
namespace {

Failure unreadable(const std::string &path, int err) {
    return Failure{ExitCode::local_file, "cannot read directory " + path + ": " + std::strerror(err)};
}

struct LocalWalk {
    const PathFilter &filter;
    Tree &tree;

    void walk(int dirfd, const std::string &shown, const std::string &relative, int depth);
    void add(int dirfd, const std::string &shown, const std::string &name, const std::string &relative, int depth);
};

void LocalWalk::add(int dirfd, const std::string &shown, const std::string &name, const std::string &relative,
                    int depth) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT)  // gone while listing: not there
            tree.problems.push_back(Failure{ExitCode::local_file, "cannot stat " + shown + "/" + name + ": " + std::strerror(errno)});
        return;
    }
    if (S_ISDIR(st.st_mode)) {
        if (!filter.includes(relative, true)) return;
        tree.directories.insert(relative);
        if (depth + 1 > kMaxTreeDepth) {
            tree.problems.push_back(Failure{ExitCode::local_file, shown + "/" + name + ": more than " +
                                                                      std::to_string(kMaxTreeDepth) + " levels deep"});
            return;
        }
        UniqueFd sub(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub) return tree.problems.push_back(unreadable(shown + "/" + name, errno));
        walk(sub.get(), shown + "/" + name, relative, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
        if (ftp::is_transfer_bookkeeping(name) || !filter.includes(relative, false)) return;
        tree.files[relative] = TreeFile{static_cast<uint64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec)};
    } else if (filter.includes(relative, false)) {
        tree.skipped.push_back(shown + "/" + name + (S_ISLNK(st.st_mode) ? ": a symbolic link" : ": a special file") +
                               ", not copied");
    }
}

void LocalWalk::walk(int dirfd, const std::string &shown, const std::string &relative, int depth) {
    // fdopendir takes the descriptor; a duplicate keeps dirfd the caller's.
    DIR *dir = ::fdopendir(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
    if (!dir) return tree.problems.push_back(unreadable(shown, errno));
    std::vector<std::string> names;
    errno = 0;
    while (struct dirent *e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(std::move(name));
        errno = 0;
    }
    const int read_error = errno;
    ::closedir(dir);
    if (read_error) return tree.problems.push_back(unreadable(shown, read_error));
    for (const auto &name : names) add(dirfd, shown, name, relative.empty() ? name : relative + "/" + name, depth);
}

}  // namespace

std::string path_under(const std::string &top, const std::string &relative) {
    if (relative.empty()) return top;
    return top.ends_with('/') ? top + relative : top + "/" + relative;
}

Outcome<Tree> list_local_tree(const std::string &top, const PathFilter &filter) {
    Tree tree;
    struct stat st {};
    if (::stat(top.c_str(), &st) != 0) {
        if (errno != ENOENT) return fail_as(ExitCode::local_file, "cannot read " + top + ": " + std::strerror(errno));
        tree.exists = false;
        return tree;
    }
    if (!S_ISDIR(st.st_mode)) return fail_as(ExitCode::usage, top + " is not a directory; sync copies directory trees");
    UniqueFd fd(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return fail_as(ExitCode::local_file, "cannot open " + top + ": " + std::strerror(errno));
    LocalWalk{filter, tree}.walk(fd.get(), top.ends_with('/') && top.size() > 1 ? top.substr(0, top.size() - 1) : top, "", 0);
    return tree;
}

}  // namespace rftp::client
