// The daemon's own accounting of what RDMA channels hold: pinned bytes, queue
// pairs and channels, across all sessions, with the configured cap on pinned
// memory. A channel holds a Reservation for its whole life; STAT shows the
// totals, so an operator (and the tests) can see that a dead client's
// session gave everything back.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "common/result.h"

namespace rftp::daemon {

struct RdmaTotals {
    uint64_t pinned_bytes = 0;
    unsigned queue_pairs = 0;
    unsigned channels = 0;
};

class RdmaBudget {
public:
    explicit RdmaBudget(uint64_t max_pinned) : max_pinned_(max_pinned) {}

    class Reservation {
    public:
        Reservation() = default;
        Reservation(Reservation &&o) noexcept;
        Reservation &operator=(Reservation &&o) noexcept;
        Reservation(const Reservation &) = delete;
        Reservation &operator=(const Reservation &) = delete;
        ~Reservation() { release(); }
        void release();

    private:
        friend class RdmaBudget;
        RdmaBudget *budget_ = nullptr;
        uint64_t bytes_ = 0;
        unsigned queue_pairs_ = 0;
    };

    // Fails (with the totals in the message) when bytes would exceed the cap.
    Result<Reservation> reserve(uint64_t bytes, unsigned queue_pairs);
    RdmaTotals totals() const;
    uint64_t max_pinned() const { return max_pinned_; }

private:
    void give_back(uint64_t bytes, unsigned queue_pairs);
    uint64_t max_pinned_;
    mutable std::mutex mutex_;
    RdmaTotals totals_;
};

}  // namespace rftp::daemon
