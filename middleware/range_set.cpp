#include "middleware/range_set.h"

namespace rftp::middleware {

bool RangeSet::add(uint64_t offset, uint64_t count) {
    if (count == 0) return true;
    uint64_t end = offset + count;
    if (end < offset || offset < start_) return false;
    std::lock_guard lock(mutex_);
    auto next = ranges_.lower_bound(offset);
    if (next != ranges_.end() && next->first < end) return false;
    if (next != ranges_.begin()) {
        auto prev = std::prev(next);
        if (prev->second > offset) return false;
        if (prev->second == offset) {
            offset = prev->first;
            ranges_.erase(prev);
        }
    }
    if (next != ranges_.end() && next->first == end) {
        end = next->second;
        ranges_.erase(next);
    }
    ranges_.emplace(offset, end);
    return true;
}

uint64_t RangeSet::contiguous_end() const {
    std::lock_guard lock(mutex_);
    auto first = ranges_.find(start_);
    return first == ranges_.end() ? start_ : first->second;
}

bool RangeSet::covers_exactly(uint64_t end) const {
    std::lock_guard lock(mutex_);
    if (end == start_) return ranges_.empty();
    return ranges_.size() == 1 && ranges_.begin()->first == start_ && ranges_.begin()->second == end;
}

void RangeSet::clear() {
    std::lock_guard lock(mutex_);
    ranges_.clear();
}

}  // namespace rftp::middleware
