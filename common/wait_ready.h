// A descriptor left non-blocking by whoever opened it (stdout on a pipe a
// parent made O_NONBLOCK) answers EAGAIN while it is full, or empty. Waiting
// for it, rather than trying again at once, keeps a slow reader from costing
// a whole core; the wait is short, so a caller still notices an abort or a
// wake-up soon.
#pragma once

#include <poll.h>

namespace rftp {

inline void wait_ready(int fd, bool for_reading) {
    pollfd ready{fd, static_cast<short>(for_reading ? POLLIN : POLLOUT), 0};
    (void)::poll(&ready, 1, 100);
}

}  // namespace rftp
