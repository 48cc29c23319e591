// What a session keeps from one TCP transfer to the next: the streams'
// buffers (block_memory_cache.h) and the io_uring instances that read and
// write them (disk/ring_cache.h). With many small files every file sets its
// streams up anew, and mapping, faulting in, setting up and tearing down
// these was most of what a file cost beyond its bytes.
//
// One per session (in rftpd, one per login), never shared between sessions.
#pragma once

#include "middleware/block_memory_cache.h"
#include "middleware/disk/ring_cache.h"

namespace rftp::middleware {

// Most memory one transfer's stream buffers take, all streams together.
inline constexpr uint64_t kTransferBufferBudget = 256ull << 20;
// Rings kept: one per stream of the widest transfer rftpd allows by default
// (max_streams 16); each costs two descriptors while kept.
inline constexpr std::size_t kKeptRings = 16;

struct StreamCache {
    BlockMemoryCache buffers{kTransferBufferBudget};
    disk::RingCache rings{kKeptRings};
};

}  // namespace rftp::middleware
