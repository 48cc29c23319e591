#include "middleware/disk/preallocate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace rftp::middleware {

Status preallocate(int fd, uint64_t offset, uint64_t length) {
    if (length == 0) return {};
    int rc;
    do rc = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(length));
    while (rc < 0 && errno == EINTR);
    if (rc == 0) return {};
    if (errno == EOPNOTSUPP || errno == ENOSYS || errno == ENODEV) return {};  // written without it
    if (errno == ENOSPC || errno == EDQUOT) {
        int err = errno;
        // What the failed call reserved beyond the file's end is given back:
        // truncating to the same size trims it.
        struct stat st {};
        if (::fstat(fd, &st) == 0) (void)::ftruncate(fd, st.st_size);
        return fail_errno("no room for " + std::to_string(length) + " bytes on the destination's file system", err);
    }
    return fail_errno("preallocate " + std::to_string(length) + " bytes");
}

}  // namespace rftp::middleware
