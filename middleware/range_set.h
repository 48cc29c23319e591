// The byte ranges of a file that have arrived, for a receiver whose blocks
// come in any order. It detects overlap (a protocol error) and tells the
// longest prefix received, which is where an interrupted transfer resumes.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace rftp::middleware {

class RangeSet {
public:
    explicit RangeSet(uint64_t start = 0) : start_(start) {}

    // Records [offset, offset+count). False when it overlaps what is already there.
    bool add(uint64_t offset, uint64_t count);
    // End of the contiguous run that begins at start (start itself when nothing arrived).
    uint64_t contiguous_end() const;
    // True when exactly [start, end) is covered, without holes.
    bool covers_exactly(uint64_t end) const;
    // Forgets every range: none of them can be trusted.
    void clear();

private:
    mutable std::mutex mutex_;
    uint64_t start_;
    std::map<uint64_t, uint64_t> ranges_;  // begin -> end, merged, non-overlapping
};

}  // namespace rftp::middleware
