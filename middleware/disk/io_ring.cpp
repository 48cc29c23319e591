#include "middleware/disk/io_ring.h"

#include <cerrno>

namespace rftp::middleware::disk {

void IoRing::Exit::operator()(io_uring *r) const {
    io_uring_queue_exit(r);
    delete r;
}

Result<IoRing> IoRing::create(unsigned entries) {
    auto *raw = new io_uring{};
    if (int rc = io_uring_queue_init(entries, raw, 0); rc < 0) {
        delete raw;
        return fail_errno("io_uring setup", -rc);
    }
    IoRing r;
    r.ring_.reset(raw);
    return r;
}

IoRing::~IoRing() = default;

int IoRing::register_buffers(std::span<const iovec> buffers) {
    int rc = io_uring_register_buffers(ring_.get(), buffers.data(), static_cast<unsigned>(buffers.size()));
    fixed_ = rc == 0;
    return rc;
}

int IoRing::wait(io_uring_cqe **cqe) {
    int rc;
    do rc = io_uring_wait_cqe(ring_.get(), cqe);
    while (rc == -EINTR);
    return rc;
}

int IoRing::wait_for(io_uring_cqe **cqe, long long nanoseconds) {
    __kernel_timespec ts{nanoseconds / 1000000000, nanoseconds % 1000000000};
    return io_uring_wait_cqe_timeout(ring_.get(), cqe, &ts);
}

}  // namespace rftp::middleware::disk
