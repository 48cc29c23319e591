#include "middleware/disk/preallocate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "middleware/disk/disk_file.h"

namespace rftp::middleware {

namespace {

Status no_room(uint64_t length, int err) {
    return fail_errno("no room for " + std::to_string(length) + " bytes on the destination's file system", err);
}

Status room_for(int fd, uint64_t length) {
    struct statvfs vfs {};
    if (::fstatvfs(fd, &vfs) != 0) return {};  // cannot tell: go on
    uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (length <= free_bytes) return {};
    return no_room(length, ENOSPC);
}

}  // namespace

Status preallocate(int fd, uint64_t offset, uint64_t length, ReservedSize size) {
    if (length == 0) return {};
    struct stat before {};
    if (::fstat(fd, &before) != 0) return fail_errno("fstat before reserving space");
    // A device has its own size, and its node's file system (/dev, a tmpfs)
    // says nothing about its room: nothing to reserve or check.
    if (!S_ISREG(before.st_mode)) return {};
    // tmpfs has no blocks to lay out: fallocate there only allocates and
    // clears pages that the transfer writes again at once (about a fifth of
    // a tmpfs upload's time). Its free space answers "is there room" as well.
    if (disk::in_memory_file_system(fd)) return room_for(fd, length);
    const int mode = size == ReservedSize::hidden ? FALLOC_FL_KEEP_SIZE : 0;
    int rc;
    do rc = ::fallocate(fd, mode, static_cast<off_t>(offset), static_cast<off_t>(length));
    while (rc < 0 && errno == EINTR);
    if (rc == 0) return {};
    int err = errno;
    // Anything else (no fallocate here, a FUSE or network file system that
    // refuses it) is written without a reservation, as before it existed.
    if (err != EFBIG && err != ENOSPC && err != EDQUOT) return {};
    // A failed attempt may have reserved (and, unhidden, sized) part of it.
    Status refused = err == EFBIG ? fail_errno("a file of " + std::to_string(offset + length) + " bytes", err)
                                  : no_room(length, err);
    if (::ftruncate(fd, before.st_size) != 0)
        return fail(Error{refused.error().code, refused.error().message + "; and the file could not be cut back to " +
                                                    std::to_string(before.st_size) + " bytes: " + std::strerror(errno)});
    return refused;
}

Status cut_to(int fd, uint64_t size) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == size) return {};
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) return fail_errno("cut the file to " + std::to_string(size) + " bytes");
    return {};
}

ReservationGuard::~ReservationGuard() {
    if (!received_) release_reservation(fd_);
    else (void)cut_to(fd_, received_->contiguous_end());
}

void release_reservation(int fd) {
    // Truncating to the file's own size trims what was reserved past its end.
    struct stat st {};
    if (::fstat(fd, &st) == 0) (void)::ftruncate(fd, st.st_size);
}

}  // namespace rftp::middleware
