// A reader's or writer's disk engine (io_uring over the block pool), and
// whether its thread sleeps in its ring: then only wake() reaches it, not
// the condition variable the pipeline signals.
#pragma once

#include <condition_variable>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/rdma/block_pool.h"

namespace rftp::middleware::rdma {

struct DiskThread {
    std::unique_ptr<disk::BlockIo> io;
    bool in_ring_wait = false;
};

// count engines (at least one) over the pool's blocks; role names them in logs.
inline Result<std::vector<DiskThread>> make_disk_threads(const BlockPool &pool, const disk::DiskOptions &options,
                                                         unsigned count, const std::string &role) {
    std::vector<DiskThread> threads;
    auto buffers = pool.buffers();
    for (unsigned i = 0; i < std::max(1u, count); ++i) {
        auto io = disk::BlockIo::create(buffers, options.queue_depth, role);
        if (!io) return fail(io.error().with_context("disk engine"));
        threads.push_back(DiskThread{std::move(*io)});
    }
    return threads;
}

// Wakes every thread, in its ring or on cv. The pipeline's lock is held.
inline void wake_disk_threads(std::vector<DiskThread> &threads, std::condition_variable &cv) {
    cv.notify_all();
    for (DiskThread &t : threads)
        if (std::exchange(t.in_ring_wait, false)) t.io->wake();
}

}  // namespace rftp::middleware::rdma
