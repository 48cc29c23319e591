// Reserving a destination's blocks before its bytes arrive.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace rftp::middleware {

// fallocate(KEEP_SIZE) of [offset, offset + length): the file's visible size
// still grows only as bytes are written, so a partial file never looks
// complete. A file system that cannot preallocate is not an error; a full
// disk (ENOSPC) or a quota (EDQUOT) is, with a message that says so, and
// whatever the attempt reserved is given back; so is a size the file system
// cannot hold (EFBIG). On tmpfs nothing is reserved: only its free space is
// checked (ENOSPC when the file cannot fit).
Status preallocate(int fd, uint64_t offset, uint64_t length);

// Gives back what a reservation holds past the file's end: for a file that
// ended shorter than reserved, or a transfer that failed.
void release_reservation(int fd);

// Releases at scope exit whatever is still reserved past the file's end:
// a no-op once the file grew to its full size, the rest back on any failure.
class ReservationGuard {
public:
    explicit ReservationGuard(int fd) : fd_(fd) {}
    ~ReservationGuard() { release_reservation(fd_); }
    ReservationGuard(const ReservationGuard &) = delete;
    ReservationGuard &operator=(const ReservationGuard &) = delete;

private:
    int fd_;
};

}  // namespace rftp::middleware
