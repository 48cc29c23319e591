// The source pipeline's disk readers: each fills the blocks it is handed
// from the file through its own disk engine (io_uring, O_DIRECT), keeping up
// to its queue depth of reads in flight, and seals each block with its
// CRC32C outside the lock as it comes back.
#include <cstring>

#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/ordered_hashing.h"
#include "middleware/rdma/source_pipeline.h"

namespace rftp::middleware::rdma {

void SourcePipeline::reader_loop(unsigned index) {
    disk::BlockIo &io = *readers_[index].io;
    BlockPool &pool = core_.pool;
    auto has_work = [&] { return file_ && !file_->done && !file_->to_load.empty(); };
    bool busy = false;  // counted in disk_busy_: blocks in hand or in flight
    std::vector<disk::FinishedOp> finished;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (!busy) {
            reader_cv_.wait(lock, [&] { return stopping_ || has_work(); });
            if (stopping_) return;
            busy = true;
            ++disk_busy_;
        }
        uint32_t id = file_ ? file_->id : 0;
        bool zeros = file_ && file_->zeros;
        bool checksums = !file_ || file_->spec.block_checksums;
        OrderedDigest *digest = file_ ? file_->digest.get() : nullptr;
        std::vector<disk::BlockOp> ops;
        while (!stopping_ && has_work() && io.in_flight() + ops.size() < io.depth()) {
            SourceFile &f = *file_;
            uint32_t block = f.to_load.front();
            f.to_load.pop_front();
            pool.set_zeroed(block, false);
            const wire::Grant &g = f.block_grant[block];
            ops.push_back({disk::IoDirection::read, f.disk.get(), block, g.offset, g.length});
        }
        readers_[index].in_ring_wait = !zeros;
        lock.unlock();
        if (zeros) {
            // /dev/zero is never read: clearing the block is the load.
            for (const disk::BlockOp &op : ops) {
                std::memset(pool.block(op.block), 0, pool.block_size());
                finished.push_back({op, {}});
            }
        } else {
            for (const disk::BlockOp &op : ops) io.start(op);
            if (io.pending()) finished = io.wait();
        }
        // With a digest to take, a block is sealed only once it is hashed:
        // the digest is of the file's bytes, whatever happens to them later.
        auto seal = [&](uint32_t block, uint32_t length) {
            return seal_block(pool, block, length, trailer_crc({pool.block(block), length}, checksums));
        };
        std::vector<uint8_t> damaged(finished.size());
        if (!digest)
            for (std::size_t i = 0; i < finished.size(); ++i)
                if (finished[i].status) damaged[i] = seal(finished[i].op.block, finished[i].op.length);
        lock.lock();
        readers_[index].in_ring_wait = false;
        for (std::size_t i = 0; i < finished.size(); ++i) {
            const disk::BlockOp &op = finished[i].op;
            if (zeros && !damaged[i] && op.length == pool.block_size()) pool.set_zeroed(op.block, true);
            if (!current_locked(id)) continue;
            if (!finished[i].status) {
                fail_locked(finished[i].status.error(), true);
                continue;
            }
            if (digest && digest->add({op.block, op.offset, op.length})) continue;  // waits for its turn
            if (digest) seal(op.block, op.length);  // a block sent again: hashed the first time
            make_ready_locked(op.block);
        }
        finished.clear();
        if (digest && current_locked(id))
            hash_in_order(
                lock, *digest, pool, [&] { return current_locked(id); },
                [&](const OrderedDigest::Piece &p) { seal(p.block, p.length); },
                [&](const OrderedDigest::Piece &p) { make_ready_locked(p.block); });
        if (!io.pending()) {
            busy = false;
            --disk_busy_;
            went_idle_locked();
        }
    }
}

}  // namespace rftp::middleware::rdma
