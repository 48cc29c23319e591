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
    int err = errno;
    if (err == EFBIG) return fail_errno("a file of " + std::to_string(offset + length) + " bytes", err);
    // Anything else (no fallocate here, a FUSE or network file system that
    // refuses it) is written without a reservation, as before it existed.
    if (err != ENOSPC && err != EDQUOT) return {};
    release_reservation(fd);
    return fail_errno("no room for " + std::to_string(length) + " bytes on the destination's file system", err);
}

void release_reservation(int fd) {
    // Truncating to the file's own size trims what was reserved past its end.
    struct stat st {};
    if (::fstat(fd, &st) == 0) (void)::ftruncate(fd, st.st_size);
}

}  // namespace rftp::middleware
