#include "middleware/block_memory_cache.h"

#include <sys/mman.h>

namespace rftp::middleware {

BlockMemory BlockMemoryCache::take(std::size_t size) {
    {
        std::lock_guard lock(mutex_);
        // The smallest that holds size: files of many sizes then still find
        // the pages the last one faulted in at the front of its mapping.
        auto fits = kept_.end();
        for (auto m = kept_.begin(); m != kept_.end(); ++m)
            if (m->size() >= size && (fits == kept_.end() || m->size() < fits->size())) fits = m;
        if (fits != kept_.end()) {
            BlockMemory m = std::move(*fits);
            kept_.erase(fits);
            kept_bytes_ -= m.size();
            return m;
        }
    }
    return BlockMemory::allocate(size);
}

void BlockMemoryCache::give(BlockMemory memory) {
    if (!memory || memory.size() > max_bytes_) return;
    // Refused only on kernels before 4.5: the pages then simply stay.
    (void)::madvise(memory.data(), memory.size(), MADV_FREE);
    std::lock_guard lock(mutex_);
    kept_bytes_ += memory.size();
    kept_.push_back(std::move(memory));
    while (kept_bytes_ > max_bytes_) {
        kept_bytes_ -= kept_.front().size();
        kept_.pop_front();  // unmapped here
    }
}

std::size_t BlockMemoryCache::kept_bytes() const {
    std::lock_guard lock(mutex_);
    return kept_bytes_;
}

}  // namespace rftp::middleware
