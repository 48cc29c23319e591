#include "daemon/vfs/open_beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rftp::daemon {
namespace {

// The kernel returns EAGAIN when a concurrent rename made it unable to prove
// a ".." stayed beneath the root; retrying is the documented answer.
constexpr int kEagainRetries = 16;

std::unexpected<Error> open_error(std::string_view vpath, int err) {
    const std::string context = "open " + std::string(vpath);
    if (err == EXDEV) return fail_msg(context + ": leads outside the user's root", -EXDEV);
    if (err == ELOOP) return fail_msg(context + ": too many levels of symbolic links, or a magic link", -ELOOP);
    return fail_errno(context, err);
}

}  // namespace

Result<UniqueFd> open_beneath(int dirfd, std::string_view vpath, uint64_t flags, uint64_t mode) {
    if (vpath.empty() || vpath.front() != '/') return fail_msg("open: not a virtual path", -EINVAL);
    if (vpath.find('\0') != std::string_view::npos) return open_error(vpath, EINVAL);

    std::string relative(vpath.substr(vpath.find_first_not_of('/') == std::string_view::npos
                                          ? vpath.size()
                                          : vpath.find_first_not_of('/')));
    if (relative.empty()) relative = ".";

    struct open_how how {};
    how.flags = flags | O_CLOEXEC;
    how.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0;  // openat2 rejects a stray mode
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;

    for (int attempt = 0;; ++attempt) {
        long fd = ::syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof how);
        if (fd >= 0) return UniqueFd(static_cast<int>(fd));
        const int err = errno;
        if (err == EINTR || (err == EAGAIN && attempt < kEagainRetries)) continue;
        return open_error(vpath, err);
    }
}

}  // namespace rftp::daemon
