// The sink pipeline's disk writers: each checks the CRC32C of the filled
// blocks it is handed, writes the intact ones at their offsets through its
// own disk engine (io_uring, O_DIRECT), keeping up to its queue depth of
// writes in flight, and hands a damaged one back to be granted again: a
// damaged block never reaches the file.
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/ordered_hashing.h"
#include "middleware/rdma/sink_pipeline.h"

namespace rftp::middleware::rdma {

void SinkPipeline::writer_loop(unsigned index) {
    disk::BlockIo &io = *writers_[index].io;
    // Which queued block to write next: the first, or in sequential mode the
    // one at the cursor (it will come: every lower offset is granted already;
    // the cursor moves only once a block is on disk, so one is in flight).
    auto next = [&]() -> std::optional<std::size_t> {
        if (!file_ || file_->done || file_->to_write.empty()) return std::nullopt;
        if (!file_->spec.sequential) return 0;
        for (std::size_t i = 0; i < file_->to_write.size(); ++i)
            if (file_->slot_offset[file_->to_write[i]] == file_->write_cursor) return i;
        return std::nullopt;
    };
    struct Damaged {
        uint32_t slot, got, want;
    };
    bool busy = false;  // counted in disk_busy_: blocks in hand or in flight
    std::vector<disk::BlockOp> ops;
    std::vector<Damaged> damaged;
    std::vector<disk::FinishedOp> finished;
    std::unique_lock lock(mutex_);
    for (;;) {
        if (!busy) {
            writer_cv_.wait(lock, [&] { return stopping_ || next(); });
            if (stopping_) return;
            busy = true;
            ++disk_busy_;
        }
        uint32_t id = file_ ? file_->id : 0;
        bool checksums = !file_ || file_->spec.block_checksums;
        ops.clear();
        while (!stopping_ && io.in_flight() + ops.size() < io.depth()) {
            auto pick = next();
            if (!pick) break;
            SinkFile &f = *file_;
            uint32_t slot = f.to_write[*pick];
            f.to_write.erase(f.to_write.begin() + static_cast<std::ptrdiff_t>(*pick));
            if (auto ok = f.slots.move(slot, SinkBlock::filled, SinkBlock::writing); !ok) {
                fail_locked(ok.error(), true);
                break;
            }
            ops.push_back({disk::IoDirection::write, f.disk.get(), slot, f.slot_offset[slot], f.slot_length[slot]});
        }
        writers_[index].in_ring_wait = true;
        lock.unlock();
        damaged.clear();
        for (const disk::BlockOp &op : ops) {
            TrailerCheck check = check_block_trailer(core_.pool.block(op.block), op.length, checksums);
            if (check.intact) io.start(op);
            else damaged.push_back({op.block, check.got, check.want});
        }
        // A damaged block is granted again at once, without waiting for the disk.
        finished = damaged.empty() && io.pending() ? io.wait() : io.take_finished();
        lock.lock();
        writers_[index].in_ring_wait = false;
        bool current = current_locked(id);
        for (const Damaged &d : damaged)
            if (current && !file_->done) checksum_failed_locked(d.slot, d.got, d.want);  // one may fail the file
        OrderedDigest *digest = current ? file_->digest.get() : nullptr;
        for (const disk::FinishedOp &f : finished) {
            if (!current_locked(id)) continue;
            if (!f.status) fail_locked(f.status.error(), true);
            else if (!digest || !digest->add({f.op.block, f.op.offset, f.op.length})) block_stored_locked(f.op.block);
            // else: on disk, and kept until the digest has taken it
        }
        finished.clear();
        if (digest && current_locked(id))
            hash_in_order(
                lock, *digest, core_.pool, [&] { return current_locked(id); }, {},
                [&](const OrderedDigest::Piece &p) { block_stored_locked(p.block); });
        if (!io.pending()) {
            busy = false;
            --disk_busy_;
            went_idle_locked();
        }
    }
}

}  // namespace rftp::middleware::rdma
