#include "daemon/rdma/rdma_budget.h"

#include <utility>

#include "common/byte_size.h"
#include "middleware/rdma/device_check.h"

namespace rftp::daemon {

RdmaBudget::Reservation::Reservation(Reservation &&o) noexcept
    : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_), queue_pairs_(o.queue_pairs_) {}

RdmaBudget::Reservation &RdmaBudget::Reservation::operator=(Reservation &&o) noexcept {
    if (this != &o) {
        release();
        budget_ = std::exchange(o.budget_, nullptr);
        bytes_ = o.bytes_;
        queue_pairs_ = o.queue_pairs_;
    }
    return *this;
}

void RdmaBudget::Reservation::release() {
    if (budget_) budget_->give_back(bytes_, queue_pairs_);
    budget_ = nullptr;
}

Result<RdmaBudget::Reservation> RdmaBudget::reserve(uint64_t bytes, unsigned queue_pairs) {
    std::lock_guard lock(mutex_);
    if (totals_.pinned_bytes + bytes > max_pinned_)
        return fail_msg("RDMA memory limit reached: " + human_bytes(totals_.pinned_bytes) + " of " +
                            human_bytes(max_pinned_) + " pinned by " +
                            std::to_string(totals_.channels) + " channel(s), this one needs " +
                            human_bytes(bytes),
                        -ENOMEM);
    totals_.pinned_bytes += bytes;
    totals_.queue_pairs += queue_pairs;
    ++totals_.channels;
    Reservation r;
    r.budget_ = this;
    r.bytes_ = bytes;
    r.queue_pairs_ = queue_pairs;
    return r;
}

void RdmaBudget::give_back(uint64_t bytes, unsigned queue_pairs) {
    std::lock_guard lock(mutex_);
    totals_.pinned_bytes -= bytes;
    totals_.queue_pairs -= queue_pairs;
    --totals_.channels;
}

RdmaTotals RdmaBudget::totals() const {
    std::lock_guard lock(mutex_);
    return totals_;
}

}  // namespace rftp::daemon
