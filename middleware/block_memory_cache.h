// Block memory a session keeps between its transfers. Mapping a TCP
// transfer's buffers afresh cost every small file its page faults (a 2 MiB
// huge page zeroed on first touch, however little of it the file used) and
// an munmap: about a third of rftpd's CPU on files of 256 KiB. A session's
// transfers run one after another and mostly ask for the same sizes, so the
// next one takes what the last gave back, its pages already in place.
//
// One cache per session, never shared between sessions: kept memory still
// holds the last transfer's bytes, and those stay with the user who moved
// them. What is kept is marked MADV_FREE, so the kernel may take the pages
// back whenever it needs memory (they read as zeros then).
//
// Except the first kUnmarkedBytes of it: marking costs a TLB flush on every
// CPU the process's threads ran on, an interrupt each, and a small file's
// buffer was marked at every file (6 % of rftp's CPU on files of 64 KiB,
// `get -r -j 4`). So an idle session pins at most that much.
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>

#include "middleware/block_memory.h"

namespace rftp::middleware {

// Kept without MADV_FREE, per cache: a few small files' buffers.
inline constexpr std::size_t kUnmarkedBytes = 1u << 20;

class BlockMemoryCache {
public:
    // Keeps at most max_bytes of mappings; the oldest go first.
    explicit BlockMemoryCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}
    BlockMemoryCache(const BlockMemoryCache &) = delete;
    BlockMemoryCache &operator=(const BlockMemoryCache &) = delete;

    // At least size bytes, aligned as BlockMemory::allocate(size) aligns
    // them: the smallest kept mapping that holds them, else a new one. Safe
    // from any thread.
    BlockMemory take(std::size_t size);
    // Back for the next transfer (or unmapped, beyond max_bytes).
    void give(BlockMemory memory);
    std::size_t kept_bytes() const;

private:
    struct Kept {
        BlockMemory memory;
        bool marked;  // MADV_FREE: counts nothing against kUnmarkedBytes
    };
    void drop_front();

    mutable std::mutex mutex_;
    std::deque<Kept> kept_;
    std::size_t kept_bytes_ = 0;
    std::size_t unmarked_bytes_ = 0;
    const std::size_t max_bytes_;
};

}  // namespace rftp::middleware
