// Reserving a destination's blocks before its bytes arrive.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "middleware/range_set.h"

namespace rftp::middleware {

// How a reservation shows in the file's size.
enum class ReservedSize {
    // fallocate(KEEP_SIZE): the visible size still grows only as bytes are
    // written, so a partial file never looks complete. For a writer whose
    // resume point is the file's size.
    hidden,
    // The size is the whole file at once, so no write extends it. On ext4 a
    // direct write past the end waits for every other write to the file,
    // while writes inside its size run side by side (an upload from the
    // network onto the disk: 2.7-2.9 -> 3.2-3.4 GB/s on the bench machine).
    // Only for a writer that keeps its resume point in a journal
    // (resume_journal.h) and cuts the file to its complete prefix when it stops.
    whole,
};

// Reserves [offset, offset + length) with fallocate. A file system that
// cannot preallocate is not an error; a full disk (ENOSPC) or a quota
// (EDQUOT) is, with a message that says so, and the file is given back its
// size and blocks from before the attempt; so is a size the file system
// cannot hold (EFBIG). On tmpfs nothing is reserved: only its free space is
// checked (ENOSPC when the file cannot fit).
Status preallocate(int fd, uint64_t offset, uint64_t length, ReservedSize size = ReservedSize::hidden);

// Gives back what a reservation holds past the file's end: for a file that
// ended shorter than reserved, or a transfer that failed.
void release_reservation(int fd);

// Cuts the file to size bytes (giving back whatever was reserved past
// them) unless it already has that size: a truncate also stamps the file as
// modified, which would make a digest taken of it in transit look stale.
// A failed cut leaves the file longer than what is sure: keep its journal.
Status cut_to(int fd, uint64_t size);

// Gives back at scope exit what the file does not hold for sure. A hidden
// reservation: whatever is still reserved past the file's end (a no-op once
// the file grew to its full size). A whole one: the file is cut to the
// complete prefix of received, which is all of it once everything arrived.
// Its resume journal stays either way: until the file is synced, only the
// journal's durable prefix survives a power loss (the caller removes it
// after the final sync).
class ReservationGuard {
public:
    explicit ReservationGuard(int fd) : fd_(fd) {}
    ReservationGuard(int fd, const RangeSet &received) : fd_(fd), received_(&received) {}
    ~ReservationGuard();
    ReservationGuard(const ReservationGuard &) = delete;
    ReservationGuard &operator=(const ReservationGuard &) = delete;

private:
    int fd_;
    const RangeSet *received_ = nullptr;
};

}  // namespace rftp::middleware
