#include "middleware/block_memory_cache.h"

#include <sys/mman.h>

namespace rftp::middleware {

BlockMemory BlockMemoryCache::take(std::size_t size) {
    {
        std::lock_guard lock(mutex_);
        // The smallest that holds size: files of many sizes then still find
        // the pages the last one faulted in at the front of its mapping.
        auto fits = kept_.end();
        for (auto k = kept_.begin(); k != kept_.end(); ++k)
            if (k->memory.size() >= size && (fits == kept_.end() || k->memory.size() < fits->memory.size())) fits = k;
        if (fits != kept_.end()) {
            BlockMemory m = std::move(fits->memory);
            if (!fits->marked) unmarked_bytes_ -= m.size();
            kept_.erase(fits);
            kept_bytes_ -= m.size();
            return m;
        }
    }
    return BlockMemory::allocate(size);
}

void BlockMemoryCache::give(BlockMemory memory) {
    if (!memory || memory.size() > max_bytes_) return;
    std::unique_lock lock(mutex_);
    const bool marked = unmarked_bytes_ + memory.size() > kUnmarkedBytes;
    if (marked) {
        lock.unlock();  // the madvise call waits for other CPUs: not under the lock
        // Refused only on kernels before 4.5: the pages then simply stay.
        (void)::madvise(memory.data(), memory.size(), MADV_FREE);
        lock.lock();
    } else {
        unmarked_bytes_ += memory.size();
    }
    kept_bytes_ += memory.size();
    kept_.push_back({std::move(memory), marked});
    while (kept_bytes_ > max_bytes_) drop_front();
}

void BlockMemoryCache::drop_front() {
    Kept &oldest = kept_.front();
    kept_bytes_ -= oldest.memory.size();
    if (!oldest.marked) unmarked_bytes_ -= oldest.memory.size();
    kept_.pop_front();  // unmapped here
}

std::size_t BlockMemoryCache::kept_bytes() const {
    std::lock_guard lock(mutex_);
    return kept_bytes_;
}

}  // namespace rftp::middleware
