// The source side of a channel: announce the file, take the sink's grants,
// have the reader fill a local block for each, and the sender write it into
// the granted remote block, with a completion notice the sink can act on.
#include <arpa/inet.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/channel.h"
#include "middleware/rdma/verbs_error.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {
namespace {

// The block's CRC32C goes right after its data, and travels in the same
// WRITE. The test-only fault switch damages the data after that, as a bad
// link would. Returns whether it did.
bool seal_block(uint8_t *block, uint32_t len, uint32_t crc) {
    put_block_trailer(block, len, crc);
    if (len == 0 || !take_fault_flip()) return false;
    block[len / 2] ^= 0x10;
    return true;
}

}  // namespace

Result<FileResult> Channel::send_file(const SendSpec &spec, TransferProgress &progress) {
    std::unique_lock lock(mutex_);
    if (failed_) return fail(failed_->with_context("RDMA channel unusable"));
    if (source_ || sink_) return fail_msg("a transfer is already running on this RDMA channel");
    // A peer that announced a file of its own meanwhile broke the protocol:
    // kept, it would be taken for the start of some later upload.
    if (early_begin_) {
        Error e = Error::msg("peer announced a file while this side was to send one");
        fail_locked(e, true);
        return fail(e);
    }
    source_.emplace();
    SourceFile &f = *source_;
    f.id = ++next_file_id_;
    f.spec = spec;
    f.progress = &progress;
    f.blocks = BlockStates<SourceBlock>(res_.params.blocks);
    f.grants = GrantLedger(spec.start, spec.size, res_.params.block_size);
    f.block_grant.resize(res_.params.blocks);
    f.chain_of.resize(res_.params.blocks);
    f.zeros = memory_endpoint(spec.fd) == MemoryEndpoint::zeros;
    if (!f.zeros) f.disk = disk::DiskFile::open(spec.fd, false, res_.params.disk.direct_io);
    if (spec.digest && spec.start == 0 && !f.zeros) f.digest = std::make_unique<OrderedDigest>();
    if (f.zeros) hold_zero_block_locked();
    wire::RdmaMessage begin;
    begin.type = wire::RdmaMessageType::file_begin;
    begin.file_id = f.id;
    begin.start = spec.start;
    begin.size = spec.size;
    send_control_locked(begin);
    return wait_file(lock, true, spec.size, progress);
}

// Every full-length block of /dev/zero is the same bytes, so one block holds
// them for the whole file and every full WRITE reads it: the file's data
// passes through one block of memory, not the whole pool, as perftest's
// ib_write_bw reuses one buffer. Short pieces use their own block (their
// trailer lands inside the zeros). Not with a pool of fewer than four blocks
// (the held block would halve what can be in flight), nor under the test
// fault switch, which damages blocks one by one.
void Channel::hold_zero_block_locked() {
    SourceFile &f = *source_;
    if (res_.params.blocks < 4 || fault_flips_armed()) return;
    auto held = f.blocks.take_free(SourceBlock::zeros);
    if (!held) return;  // every block is free when a file begins; this only keeps the API honest
    uint32_t z = *held;
    uint32_t len = res_.params.block_size;
    if (!zeroed_[z]) std::memset(res_.block(z), 0, len);
    seal_block(res_.block(z), len, zero_trailer_locked(z, len));
    zeroed_[z] = 1;
    f.zero_block = z;
}

// The trailer of len zeros for this file: their CRC32C (taken once per
// length from block, which holds zeros) or 0 with checksums off.
uint32_t Channel::zero_trailer_locked(uint32_t block, uint32_t len) {
    if (!source_->spec.block_checksums) return 0;
    if (len != zero_crc_length_) zero_crc_ = crc32c({res_.block(block), len}), zero_crc_length_ = len;
    return zero_crc_;
}

void Channel::assign_blocks_locked() {
    SourceFile &f = *source_;
    bool to_reader = false, to_sender = false;
    while (!f.waiting.empty()) {
        auto b = f.blocks.take_free(SourceBlock::loading);
        if (!b) break;
        f.block_grant[*b] = f.waiting.front();
        f.waiting.pop_front();
        // /dev/zero needs no reader: a full block is sent from the zero block
        // (its own memory unused), another already zeroed only needs its trailer.
        bool from_zero_block = f.reads_zero_block(f.block_grant[*b], res_.params.block_size);
        if (from_zero_block || (f.zeros && zeroed_[*b])) {
            uint32_t len = f.block_grant[*b].length;
            // A short trailer lands inside the block's zeros: it is no longer all zeros.
            if (!from_zero_block &&
                (seal_block(res_.block(*b), len, zero_trailer_locked(*b, len)) || len < res_.params.block_size))
                zeroed_[*b] = 0;
            if (auto ok = f.blocks.move(*b, SourceBlock::loading, SourceBlock::ready); !ok) return fail_locked(ok.error(), true);
            f.to_send.push_back(*b);
            to_sender = true;
        } else {
            f.to_load.push_back(*b);
            to_reader = true;
        }
    }
    if (to_reader) wake_disk_threads_locked(readers_, reader_cv_);
    if (to_sender) sender_cv_.notify_one();
}

void Channel::make_ready_locked(uint32_t block) {
    if (auto ok = source_->blocks.move(block, SourceBlock::loading, SourceBlock::ready); !ok)
        return fail_locked(ok.error(), true);
    source_->to_send.push_back(block);
    sender_cv_.notify_one();
}

// Each reader keeps up to its queue depth of block reads in flight. Blocks
// are sealed with their CRC32C outside the lock, as they come back.
void Channel::reader_loop(unsigned index) {
    disk::BlockIo &io = *readers_[index].io;
    auto has_work = [&] { return source_ && !source_->done && !source_->to_load.empty(); };
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
        uint32_t id = source_ ? source_->id : 0;
        bool zeros = source_ && source_->zeros;
        bool checksums = !source_ || source_->spec.block_checksums;
        OrderedDigest *digest = source_ ? source_->digest.get() : nullptr;
        std::vector<disk::BlockOp> ops;
        while (!stopping_ && has_work() && io.in_flight() + ops.size() < io.depth()) {
            SourceFile &f = *source_;
            uint32_t block = f.to_load.front();
            f.to_load.pop_front();
            zeroed_[block] = 0;
            const wire::Grant &g = f.block_grant[block];
            ops.push_back({disk::IoDirection::read, f.disk.get(), block, g.offset, g.length});
        }
        readers_[index].in_ring_wait = !zeros;
        lock.unlock();
        if (zeros) {
            // /dev/zero is never read: clearing the block is the load.
            for (const disk::BlockOp &op : ops) {
                std::memset(res_.block(op.block), 0, res_.params.block_size);
                finished.push_back({op, {}});
            }
        } else {
            for (const disk::BlockOp &op : ops) io.start(op);
            if (io.pending()) finished = io.wait();
        }
        // With a digest to take, a block is sealed only once it is hashed:
        // the digest is of the file's bytes, whatever happens to them later.
        auto seal = [&](uint32_t block, uint32_t length) {
            return seal_block(res_.block(block), length, trailer_crc({res_.block(block), length}, checksums));
        };
        std::vector<uint8_t> damaged(finished.size());
        if (!digest)
            for (std::size_t i = 0; i < finished.size(); ++i)
                if (finished[i].status) damaged[i] = seal(finished[i].op.block, finished[i].op.length);
        lock.lock();
        readers_[index].in_ring_wait = false;
        for (std::size_t i = 0; i < finished.size(); ++i) {
            const disk::BlockOp &op = finished[i].op;
            if (zeros && !damaged[i] && op.length == res_.params.block_size) zeroed_[op.block] = 1;
            if (!source_ || source_->id != id || source_->done) continue;
            if (!finished[i].status) {
                fail_locked(finished[i].status.error(), true);
                continue;
            }
            if (digest && digest->add({op.block, op.offset, op.length})) continue;  // waits for its turn
            if (digest) seal(op.block, op.length);  // a block sent again: hashed the first time
            make_ready_locked(op.block);
        }
        finished.clear();
        if (digest && source_ && source_->id == id && !source_->done)
            hash_in_order(
                lock, *digest, true, [&](const OrderedDigest::Piece &p) { seal(p.block, p.length); },
                [&](const OrderedDigest::Piece &p) { make_ready_locked(p.block); });
        if (!io.pending()) {
            busy = false;
            --disk_busy_;
            went_idle_locked();
        }
    }
}

void Channel::sender_loop() {
    // Up to this many ready blocks go to one queue pair in one post, with one
    // signalled completion: fewer system calls and wake-ups per block.
    constexpr std::size_t kMaxChain = 8;
    const unsigned streams = res_.params.streams;
    std::unique_lock lock(mutex_);
    auto pick_qp = [&]() -> unsigned {
        for (unsigned i = 0; i < streams; ++i) {
            unsigned q = 1 + (next_qp_ + i) % streams;
            if (in_flight_[q] < res_.params.iodepth) {
                next_qp_ = (next_qp_ + i + 1) % streams;
                return q;
            }
        }
        return 0;
    };
    std::vector<Posting> chain;
    for (;;) {
        unsigned qp = 0;
        sender_cv_.wait(lock, [&] {
            if (stopping_) return true;
            if (!source_ || source_->done || source_->to_send.empty()) return false;
            qp = pick_qp();
            return qp != 0;
        });
        if (stopping_) return;
        SourceFile &f = *source_;
        // Until the device has shown whether it takes an immediate, one block
        // at a time: the probe must not take a chain down with it.
        // At most half the iodepth per chain, so one chain is always in flight
        // while the next is posted (a chain completes only as a whole).
        std::size_t room = notice_mode_ == NoticeMode::unknown
                               ? 1
                               : std::min<std::size_t>(kMaxChain, std::max(1u, res_.params.iodepth / 2));
        room = std::min<std::size_t>(room, res_.params.iodepth - in_flight_[qp]);
        chain.clear();
        Status moved;
        while (chain.size() < room && !f.to_send.empty()) {
            uint32_t block = f.to_send.front();
            f.to_send.pop_front();
            moved = f.blocks.move(block, SourceBlock::ready, SourceBlock::posted);
            if (!moved) break;
            const wire::Grant &g = f.block_grant[block];
            chain.push_back({block, g, f.reads_zero_block(g, res_.params.block_size) ? *f.zero_block : block});
        }
        if (!moved) {
            fail_locked(moved.error(), true);
            continue;
        }
        in_flight_[qp] += static_cast<unsigned>(chain.size());
        std::vector<uint32_t> members;
        for (const Posting &p : chain) members.push_back(p.block);
        f.chain_of[chain.back().block] = std::move(members);
        uint32_t file_id = f.id;
        sender_busy_ = true;
        lock.unlock();
        Status posted = post_chain(chain, qp, file_id);
        lock.lock();
        sender_busy_ = false;
        went_idle_locked();
        if (!posted) fail_locked(posted.error(), true);
    }
}

// Each block goes as RDMA WRITE WITH IMMEDIATE (the immediate names the
// sink's block) where the device takes it; otherwise as WRITE then SEND of a
// block_done notice on the same queue pair, which delivers them in order, so
// the notice never waits for the WRITE's local completion. Only the chain's
// last work request is signalled.
Status Channel::post_chain(const std::vector<Posting> &chain, unsigned qp, uint32_t file_id) {
    NoticeMode mode;
    {
        std::lock_guard lock(mutex_);
        mode = notice_mode_;
    }
    const std::size_t n = chain.size();
    std::vector<ibv_sge> sges(2 * n);
    std::vector<ibv_send_wr> wrs(2 * n);
    auto build = [&](bool with_imm) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const Posting &p = chain[i];
            bool last = i + 1 == n;
            // The data and its checksum trailer, in one WRITE.
            sges[w] = {reinterpret_cast<uintptr_t>(res_.block(p.memory)),
                       p.grant.length + static_cast<uint32_t>(kBlockTrailerBytes), res_.pool_mr->lkey};
            ibv_send_wr &write = wrs[w];
            write = {};
            write.wr_id = make_wr_id(WorkKind::write, qp, p.block);
            write.sg_list = &sges[w];
            write.num_sge = 1;
            write.wr.rdma.remote_addr = p.grant.addr;
            write.wr.rdma.rkey = p.grant.rkey;
            if (with_imm) {
                write.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
                write.imm_data = htonl(p.grant.slot);
                write.send_flags = last ? IBV_SEND_SIGNALED : 0;
                ++w;
            } else {
                write.opcode = IBV_WR_RDMA_WRITE;
                ++w;
                wire::RdmaMessage m;
                m.type = wire::RdmaMessageType::block_done;
                m.file_id = file_id;
                m.slot = p.grant.slot;
                m.length = p.grant.length;
                uint8_t *buf = res_.notice_slot(p.block);
                std::size_t len = wire::encode(m, {buf, kNoticeSlot});
                sges[w] = {reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), res_.messages_mr->lkey};
                ibv_send_wr &send = wrs[w];
                send = {};
                send.wr_id = make_wr_id(WorkKind::notice, qp, p.block);
                send.sg_list = &sges[w];
                send.num_sge = 1;
                send.opcode = IBV_WR_SEND;
                send.send_flags = last ? IBV_SEND_SIGNALED : 0;
                ++w;
            }
        }
        for (std::size_t i = 0; i + 1 < w; ++i) wrs[i].next = &wrs[i + 1];
        wrs[w - 1].next = nullptr;
    };
    ibv_send_wr *bad = nullptr;
    if (mode != NoticeMode::write_then_send) {
        build(true);
        // Providers differ in the sign of the errno they return (siw: negative).
        int rc = std::abs(ibv_post_send(res_.qp(qp), wrs.data(), &bad));
        if (rc == 0) {
            if (mode == NoticeMode::unknown) {
                std::lock_guard lock(mutex_);
                notice_mode_ = NoticeMode::write_with_imm;
            }
            return {};
        }
        if (mode != NoticeMode::unknown || (rc != EINVAL && rc != EOPNOTSUPP && rc != ENOSYS))
            return fail_verbs("post RDMA WRITE WITH IMMEDIATE", rc);
        log::debug(label_ + " event=rdma_notice device refuses WRITE WITH IMMEDIATE (" + std::strerror(rc) +
                   "); notifying with WRITE then SEND");
        std::lock_guard lock(mutex_);
        notice_mode_ = NoticeMode::write_then_send;
    }
    build(false);
    if (int rc = std::abs(ibv_post_send(res_.qp(qp), wrs.data(), &bad))) return fail_verbs("post RDMA WRITE and notice", rc);
    return {};
}

void Channel::handle_send_done(unsigned qp, uint32_t last_block) {
    std::lock_guard lock(mutex_);
    if (!source_ || failed_) return;
    SourceFile &f = *source_;
    if (!f.blocks.valid(last_block)) return fail_locked(Error::msg("completion for an unknown block"), false);
    // The signalled work request completes its whole chain (a queue pair completes in order).
    std::vector<uint32_t> chain = std::move(f.chain_of[last_block]);
    f.chain_of[last_block].clear();
    if (chain.empty()) return fail_locked(Error::msg("completion for a block that was not posted"), false);
    if (qp < in_flight_.size()) in_flight_[qp] -= std::min<unsigned>(in_flight_[qp], static_cast<unsigned>(chain.size()));
    for (uint32_t block : chain) {
        if (auto ok = f.blocks.move(block, SourceBlock::posted, SourceBlock::free); !ok) return fail_locked(ok.error(), true);
        // A block sent again (its checksum failed at the sink) counts once.
        const wire::Grant &g = f.block_grant[block];
        if (f.sent.add(g.offset, g.length)) {
            f.bytes_acked += g.length;
            f.progress->bytes.fetch_add(g.length);
        } else {
            f.progress->blocks_resent.fetch_add(1);
        }
    }
    assign_blocks_locked();
    sender_cv_.notify_one();
    if (f.confirmed && f.all_returned()) changed_.notify_all();
}

Result<FileResult> Channel::wait_file(std::unique_lock<std::mutex> &lock, bool source, uint64_t size,
                                      TransferProgress &progress) {
    using Clock = std::chrono::steady_clock;
    auto began = Clock::now();
    auto last_change = began;
    uint64_t last_bytes = progress.bytes.load();
    auto finished = [&] {
        if (source) return source_->done || (source_->confirmed && source_->all_returned());
        return sink_->done;
    };
    while (!finished()) {
        if (!source && sink_->reserve_pending) {
            reserve_then_grant(lock);
            last_change = Clock::now();
            continue;
        }
        changed_.wait_for(lock, std::chrono::milliseconds(200));
        if (finished()) break;
        if (stopping_) {
            fail_locked(Error{-ECANCELED, "the channel is shutting down"}, false);
            break;
        }
        if (progress.abort.load()) {
            fail_locked(Error{-ECANCELED, "transfer aborted"}, true);
            break;
        }
        uint64_t now_bytes = progress.bytes.load();
        if (now_bytes != last_bytes) {
            last_bytes = now_bytes;
            last_change = Clock::now();
        } else if (Clock::now() - last_change > std::chrono::seconds(res_.params.stall_timeout_s)) {
            fail_locked(Error{-ETIMEDOUT, "no RDMA progress for " + std::to_string(res_.params.stall_timeout_s) + " s"},
                        true);
            break;
        }
    }
    // Nothing may still be reading or writing the caller's file after we return.
    draining_ = true;
    changed_.wait(lock, [&] { return disk_busy_ == 0 && !sender_busy_; });
    draining_ = false;

    FileResult r;
    r.seconds = std::chrono::duration<double>(Clock::now() - began).count();
    r.notice = notice_mode_;
    std::optional<Error> error;
    if (source) {
        r.bytes = source_->bytes_acked;
        if (source_->digest) r.sha256 = source_->digest->finish(size);
        log_disk_summary_locked("source", source_->id, source_->disk.get());
        if (!source_->confirmed || source_->error) error = source_->error.value_or(Error::msg("transfer did not finish"));
        source_.reset();
    } else {
        r.bytes = sink_->bytes_written;
        r.notice = sink_->notice;
        if (sink_->digest) r.sha256 = sink_->digest->finish(sink_->size);
        log_disk_summary_locked("sink", sink_->id, sink_->disk.get());
        if (sink_->error) error = sink_->error;
        sink_.reset();
    }
    if (error) return fail(*error);
    return r;
}

}  // namespace rftp::middleware::rdma
