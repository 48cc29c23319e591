// RAII owner of one io_uring instance (liburing). Errors are negative errno
// values, as liburing returns them.
#pragma once

#include <liburing.h>
#include <sys/uio.h>

#include <memory>
#include <span>

#include "common/result.h"

namespace rftp::middleware::disk {

class IoRing {
public:
    // A ring with room for entries submissions; fails where the kernel has
    // no io_uring or forbids it (seccomp, kernel.io_uring_disabled).
    static Result<IoRing> create(unsigned entries);
    IoRing(IoRing &&) noexcept = default;
    IoRing &operator=(IoRing &&) noexcept = default;
    ~IoRing();

    // Registers buffers as fixed: the kernel pins them once instead of per
    // operation. Returns 0 or -errno (the ring still works with plain buffers).
    int register_buffers(std::span<const iovec> buffers);
    bool has_fixed_buffers() const { return fixed_; }
    // Room for this many submissions at once (at least what create() asked).
    unsigned entries() const { return ring_->sq.ring_entries; }

    io_uring_sqe *next_sqe() { return io_uring_get_sqe(ring_.get()); }  // nullptr when full
    int submit() { return io_uring_submit(ring_.get()); }
    // Waits for a completion (-EINTR is retried).
    int wait(io_uring_cqe **cqe);
    // As wait, but -ETIME after the given time with nothing completed.
    int wait_for(io_uring_cqe **cqe, long long nanoseconds);
    int peek(io_uring_cqe **cqe) { return io_uring_peek_cqe(ring_.get(), cqe); }
    void seen(io_uring_cqe *cqe) { io_uring_cqe_seen(ring_.get(), cqe); }

private:
    IoRing() = default;
    struct Exit {
        void operator()(io_uring *r) const;
    };
    std::unique_ptr<io_uring, Exit> ring_;  // on the heap: liburing's struct must not move
    bool fixed_ = false;
};

}  // namespace rftp::middleware::disk
