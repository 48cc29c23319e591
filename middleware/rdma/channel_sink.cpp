// The sink side of a channel: wait for the source's announcement, grant every
// free block ahead of need (the whole pool: it should cover bandwidth x
// round trip), take each notice, have the writer put the block at its offset
// and grant it straight back, batched with whatever else freed meanwhile.
#include <unistd.h>

#include <algorithm>

#include "common/log.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/disk/preallocate.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/channel.h"
#include "protocol/checksum_failure.h"

namespace rftp::middleware::rdma {
Result<FileResult> Channel::receive_file(const ReceiveSpec &spec, TransferProgress &progress, RangeSet &received) {
    std::unique_lock lock(mutex_);
    if (failed_) return fail(failed_->with_context("RDMA channel unusable"));
    if (source_ || sink_) return fail_msg("a transfer is already running on this RDMA channel");
    sink_.emplace();
    SinkFile &f = *sink_;
    f.spec = spec;
    f.progress = &progress;
    f.received = &received;
    f.slots = BlockStates<SinkBlock>(res_.params.blocks);
    f.slot_offset.resize(res_.params.blocks);
    f.slot_length.resize(res_.params.blocks);
    f.discard = memory_endpoint(spec.fd) == MemoryEndpoint::discard;
    if (!f.discard) f.disk = disk::DiskFile::open(spec.fd, true, res_.params.disk.direct_io, spec.placement);
    if (spec.digest && spec.start == 0 && !f.discard) f.digest = std::make_unique<OrderedDigest>();
    f.seekable = f.discard || f.disk->seekable;
    if (!f.seekable && !spec.sequential) {
        sink_.reset();
        return fail_msg("blocks arrive in any order: a destination that cannot seek needs sequential writes", -ESPIPE);
    }
    if (early_begin_) {
        wire::RdmaMessage begin = *early_begin_;
        early_begin_.reset();
        start_sink_locked(begin);
    }
    return wait_file(lock, false, 0, progress);
}

void Channel::start_sink_locked(const wire::RdmaMessage &begin) {
    SinkFile &f = *sink_;
    std::fill(zeroed_.begin(), zeroed_.end(), 0);  // the peer writes into every block from here on
    f.id = begin.file_id;
    f.begun = true;
    f.start = begin.start;
    f.size = begin.size;
    f.next_offset = begin.start;
    f.write_cursor = begin.start;
    if (begin.start != f.spec.start)
        return fail_locked(Error::msg("the sending side starts at byte " + std::to_string(begin.start) +
                                      ", this side expected " + std::to_string(f.spec.start)),
                           true);
    if (begin.size > f.spec.max_size)
        return fail_locked(Error{-EFBIG, "a file of " + std::to_string(begin.size) + " bytes is over the limit"}, true);
    if (f.spec.expect_size && *f.spec.expect_size != begin.size)
        return fail_locked(Error{kFileChanged, "the sending side announced " + std::to_string(begin.size) +
                                              " bytes, expected " + std::to_string(*f.spec.expect_size) +
                                              " (the file changed)"},
                           true);
    if (f.start == f.size) return finish_sink_locked(std::nullopt);
    if (f.spec.preallocate && f.seekable && !f.discard) {
        // This may run in a completion handler, which never waits on a disk
        // (an fallocate can take a while): the thread in receive_file
        // reserves the space, then grants.
        f.reserve_pending = true;
        changed_.notify_all();
        return;
    }
    grant_locked();
    flush_grants_locked();
}

// On the thread in receive_file, the lock held on entry and on return; it is
// let go around the fallocate, so completions (an abort) go on meanwhile.
void Channel::reserve_then_grant(std::unique_lock<std::mutex> &lock) {
    SinkFile &f = *sink_;  // only that thread resets sink_
    f.reserve_pending = false;
    const int fd = f.spec.fd;
    const uint64_t start = f.start, length = f.size - f.start;
    const auto size = f.spec.on_prefix_grown ? ReservedSize::whole : ReservedSize::hidden;
    lock.unlock();
    auto reserved = preallocate(fd, start, length, size);
    lock.lock();
    // Aborted meanwhile (ABOR, Ctrl-C): wait_file ends it; nothing is granted.
    if (failed_ || stopping_ || f.done || f.progress->abort.load()) return;
    if (!reserved) return fail_locked(reserved.error(), true);
    grant_locked();
    flush_grants_locked();
}

// What the source needs to write bytes [offset, offset + len) into our block
// slot. A /dev/null file keeps nothing, so every slot lands in the pool's
// first block: its data passes through one block of memory, not the whole
// pool, as perftest's ib_write_bw reuses one buffer. The slots still go
// through their states one by one; only the bytes share a place.
wire::Grant Channel::grant_of(uint32_t slot, uint64_t offset, uint32_t len) const {
    uint32_t landing = sink_ && sink_->discard ? 0 : slot;
    return wire::Grant{slot, len, offset, reinterpret_cast<uintptr_t>(res_.block(landing)), res_.pool_mr->rkey};
}

void Channel::grant_locked() {
    SinkFile &f = *sink_;
    while (f.next_offset < f.size) {
        auto slot = f.slots.take_free(SinkBlock::lending);
        if (!slot) break;
        uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(res_.params.block_size, f.size - f.next_offset));
        lend_locked(*slot, f.next_offset, len, std::nullopt);
        f.next_offset += len;
        if (f.grants_to_send.size() == wire::kMaxGrantsPerMessage) flush_grants_locked();
    }
}

// Queues the grant of slot (in state lending) for [offset, offset + len).
// The slot still holds what was last written into it, a block whose
// trailer matched its bytes: its trailer is spoiled first, so a notice that
// comes without a fresh WRITE (a replayed or duplicated notice, a WRITE
// aimed at another slot) fails its check instead of passing the old bytes
// off as these. contents_crc: the CRC32C of its first len bytes, where
// known (a damaged block, granted again), makes that certain; otherwise
// the old trailer is inverted, which is certain for an old block of the
// same length (every one but a file's last).
void Channel::lend_locked(uint32_t slot, uint64_t offset, uint32_t len, std::optional<uint32_t> contents_crc) {
    SinkFile &f = *sink_;
    f.slot_offset[slot] = offset;
    f.slot_length[slot] = len;
    if (!f.discard && f.spec.block_checksums) {
        uint8_t *block = res_.block(slot);
        put_block_trailer(block, len, contents_crc ? ~*contents_crc : ~block_trailer(block, len));
    }
    f.grants_to_send.push_back(grant_of(slot, offset, len));
}

void Channel::flush_grants_locked() {
    SinkFile &f = *sink_;
    std::size_t i = 0;
    while (i < f.grants_to_send.size()) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::grant;
        m.file_id = f.id;
        while (i < f.grants_to_send.size() && m.grant_count < wire::kMaxGrantsPerMessage) {
            const wire::Grant &g = f.grants_to_send[i++];
            // Notices are taken for it from here on (the lock is held until it is sent).
            if (auto ok = f.slots.move(g.slot, SinkBlock::lending, SinkBlock::granted); !ok)
                return fail_locked(ok.error(), true);
            m.grants[m.grant_count++] = g;
        }
        send_control_locked(m);
    }
    f.grants_out += static_cast<unsigned>(f.grants_to_send.size());
    f.grants_to_send.clear();
}

void Channel::finish_sink_locked(std::optional<Error> error) {
    if (error) return fail_locked(*error, true);
    SinkFile &f = *sink_;
    wire::RdmaMessage m;
    m.type = wire::RdmaMessageType::file_done;
    m.file_id = f.id;
    m.bytes = f.bytes_written;
    send_control_locked(m);
    f.done = true;
    changed_.notify_all();
}

void Channel::handle_notice(unsigned qp, uint32_t slot, uint32_t length, std::optional<uint32_t> file_id,
                            NoticeMode mode) {
    std::lock_guard lock(mutex_);
    if (failed_ || stopping_) return;
    auto violation = [&](const std::string &what) {
        fail_locked(Error::msg("peer broke the RDMA protocol on queue pair " + std::to_string(qp) + ": " + what), true);
    };
    if (!sink_ || !sink_->begun) return violation("a block notice while no file is being received");
    SinkFile &f = *sink_;
    if (file_id && *file_id != f.id) return violation("a block notice for file " + std::to_string(*file_id));
    if (f.grants_out == 0) return violation("a block notice while no grant is out");
    // Only a slot whose grant went out (not one still waiting in a batch).
    if (auto ok = f.slots.move(slot, SinkBlock::granted, SinkBlock::filled); !ok) return violation(ok.error().message);
    if (length != f.slot_length[slot])
        return violation("block " + std::to_string(slot) + " filled with " + std::to_string(length) + " bytes, " +
                         std::to_string(f.slot_length[slot]) + " were granted");
    f.notice = mode;
    --f.grants_out;
    if (f.discard) {
        // Nothing to write: the block is free again at once, no writer hop.
        if (auto ok = f.slots.move(slot, SinkBlock::filled, SinkBlock::writing); !ok) return fail_locked(ok.error(), true);
        return block_stored_locked(slot);
    }
    f.to_write.push_back(slot);
    wake_disk_threads_locked(writers_, writer_cv_);
}

// Each writer keeps up to its queue depth of block writes in flight. A
// block's CRC32C is checked before it is written: a damaged block never
// reaches the file.
void Channel::writer_loop(unsigned index) {
    disk::BlockIo &io = *writers_[index].io;
    // Which queued block to write next: the first, or in sequential mode the
    // one at the cursor (it will come: every lower offset is granted already;
    // the cursor moves only once a block is on disk, so one is in flight).
    auto next = [&]() -> std::optional<std::size_t> {
        if (!sink_ || sink_->done || sink_->to_write.empty()) return std::nullopt;
        if (!sink_->spec.sequential) return 0;
        for (std::size_t i = 0; i < sink_->to_write.size(); ++i)
            if (sink_->slot_offset[sink_->to_write[i]] == sink_->write_cursor) return i;
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
        uint32_t id = sink_ ? sink_->id : 0;
        bool checksums = !sink_ || sink_->spec.block_checksums;
        ops.clear();
        while (!stopping_ && io.in_flight() + ops.size() < io.depth()) {
            auto pick = next();
            if (!pick) break;
            SinkFile &f = *sink_;
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
            TrailerCheck check = check_block_trailer(res_.block(op.block), op.length, checksums);
            if (check.intact) io.start(op);
            else damaged.push_back({op.block, check.got, check.want});
        }
        // A damaged block is granted again at once, without waiting for the disk.
        finished = damaged.empty() && io.pending() ? io.wait() : io.take_finished();
        lock.lock();
        writers_[index].in_ring_wait = false;
        bool current = sink_ && sink_->id == id && !sink_->done;
        for (const Damaged &d : damaged)
            if (current && !sink_->done) checksum_failed_locked(d.slot, d.got, d.want);  // one may fail the file
        OrderedDigest *digest = current ? sink_->digest.get() : nullptr;
        for (const disk::FinishedOp &f : finished) {
            if (!sink_ || sink_->id != id || sink_->done) continue;
            if (!f.status) fail_locked(f.status.error(), true);
            else if (!digest || !digest->add({f.op.block, f.op.offset, f.op.length})) block_stored_locked(f.op.block);
            // else: on disk, and kept until the digest has taken it
        }
        finished.clear();
        if (digest && sink_ && sink_->id == id && !sink_->done)
            hash_in_order(lock, *digest, false, {}, [&](const OrderedDigest::Piece &p) { block_stored_locked(p.block); });
        if (!io.pending()) {
            busy = false;
            --disk_busy_;
            went_idle_locked();
        }
    }
}

// A damaged block is granted again for the same bytes, a few times; a
// block that keeps arriving damaged fails the file (the path corrupts data).
void Channel::checksum_failed_locked(uint32_t slot, uint32_t got, uint32_t want) {
    SinkFile &f = *sink_;
    uint64_t offset = f.slot_offset[slot];
    uint32_t len = f.slot_length[slot];
    unsigned failures = ++f.checksum_failures[offset];
    char line[200];
    std::snprintf(line, sizeof line, " event=block_checksum_mismatch offset=%llu length=%u crc32c=%08x expected=%08x attempt=%u",
                  static_cast<unsigned long long>(offset), len, got, want, failures);
    log::warning(label_ + line);
    if (failures >= kMaxBlockAttempts)
        return fail_locked(Error{-EBADMSG, ftp::checksum_failure_text(offset, len, failures)}, true);
    if (++f.damaged_blocks > kMaxResentBlocksPerFile)
        return fail_locked(Error{-EBADMSG, "more than " + std::to_string(kMaxResentBlocksPerFile) +
                                               " blocks of this file arrived damaged: the path between the hosts "
                                               "is damaging data"},
                           true);
    if (f.progress) f.progress->blocks_resent.fetch_add(1);
    if (auto ok = f.slots.move(slot, SinkBlock::writing, SinkBlock::lending); !ok) return fail_locked(ok.error(), true);
    lend_locked(slot, offset, len, got);
    flush_grants_locked();
}

// A block is on disk (or discarded): account for it, then grant it again or finish the file.
void Channel::block_stored_locked(uint32_t slot) {
    SinkFile &g = *sink_;
    if (auto ok = g.slots.move(slot, SinkBlock::writing, SinkBlock::free); !ok) return fail_locked(ok.error(), true);
    uint64_t offset = g.slot_offset[slot];
    uint32_t len = g.slot_length[slot];
    g.write_cursor = std::max(g.write_cursor, offset + len);
    uint64_t prefix_before = g.received->contiguous_end();
    if (!g.received->add(offset, len))
        return fail_locked(Error::msg("block at offset " + std::to_string(offset) + " arrived twice"), true);
    g.bytes_written += len;
    g.progress->bytes.fetch_add(len);
    if (g.spec.on_prefix_grown) {
        uint64_t prefix = g.received->contiguous_end();
        if (prefix != prefix_before) g.spec.on_prefix_grown(prefix);
    }
    if (g.bytes_written == g.size - g.start) return finish_sink_locked(std::nullopt);
    grant_locked();
    // Batch the grants while the source still holds half the pool (it
    // has work for a round trip, and its notices will bring us back
    // here); below that, send them at once.
    bool source_low = g.grants_out < std::max(1u, res_.params.blocks / 2);
    if (source_low || g.grants_to_send.size() >= wire::kMaxGrantsPerMessage / 2) flush_grants_locked();
}

}  // namespace rftp::middleware::rdma
