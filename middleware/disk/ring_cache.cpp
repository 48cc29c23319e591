#include "middleware/disk/ring_cache.h"

namespace rftp::middleware::disk {

std::optional<KeptRing> RingCache::take(unsigned entries) {
    std::lock_guard lock(mutex_);
    auto fits = kept_.end();
    for (auto r = kept_.begin(); r != kept_.end(); ++r)
        if (r->ring.entries() >= entries && (fits == kept_.end() || r->ring.entries() < fits->ring.entries())) fits = r;
    if (fits == kept_.end()) return std::nullopt;
    KeptRing r = std::move(*fits);
    kept_.erase(fits);
    return r;
}

void RingCache::give(KeptRing ring) {
    if (ring.ring.has_fixed_buffers()) return;  // pins another transfer's memory: closed
    std::lock_guard lock(mutex_);
    if (kept_.size() < max_rings_) kept_.push_back(std::move(ring));
}

std::size_t RingCache::kept() const {
    std::lock_guard lock(mutex_);
    return kept_.size();
}

}  // namespace rftp::middleware::disk
