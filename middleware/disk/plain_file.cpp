#include "middleware/disk/plain_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

namespace rftp::middleware {

UniqueFd open_plain_file(const std::string &path, int flags, mode_t mode) {
    UniqueFd fd(::open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK, mode));
    if (!fd) return fd;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return UniqueFd();
    if (!S_ISREG(st.st_mode)) {
        errno = EINVAL;
        return UniqueFd();
    }
    // Blocking again: the disk engine's reads and writes must not see EAGAIN.
    if (!(flags & O_NONBLOCK)) (void)::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    return fd;
}

}  // namespace rftp::middleware
