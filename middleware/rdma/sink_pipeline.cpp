#include "middleware/rdma/sink_pipeline.h"

#include <algorithm>
#include <chrono>
#include <system_error>

#include "common/log.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/disk/preallocate.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/file_wait.h"
#include "protocol/checksum_failure.h"

namespace rftp::middleware::rdma {

Status SinkPipeline::start() {
    auto writers = make_disk_threads(core_.pool, core_.params().disk, core_.params().disk.writers, core_.label + " writer");
    if (!writers) return fail(writers.error());
    writers_ = std::move(*writers);
    // Out of threads, std::thread throws: that is this channel's failure,
    // not the process's. stop() joins those started.
    try {
        for (unsigned i = 0; i < writers_.size(); ++i) threads_.emplace_back([this, i] { writer_loop(i); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("start the RDMA sink threads: ") + e.what(), -e.code().value());
    }
    return {};
}

void SinkPipeline::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        wake_disk_threads(writers_, writer_cv_);
    }
    changed_.notify_all();
    for (auto &t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

Status SinkPipeline::open(const ReceiveSpec &spec, TransferProgress &progress, RangeSet &received) {
    const ChannelParams &params = core_.params();
    std::lock_guard lock(mutex_);
    file_.emplace();
    SinkFile &f = *file_;
    f.spec = spec;
    f.progress = &progress;
    f.received = &received;
    f.slots = BlockStates<SinkBlock>(params.blocks);
    f.slot_offset.resize(params.blocks);
    f.slot_length.resize(params.blocks);
    f.discard = memory_endpoint(spec.fd) == MemoryEndpoint::discard;
    if (!f.discard) f.disk = disk::DiskFile::open(spec.fd, true, params.disk.direct_io, spec.placement);
    if (spec.digest && spec.start == 0 && !f.discard) f.digest = std::make_unique<OrderedDigest>();
    f.seekable = f.discard || f.disk->seekable;
    if (!f.seekable && !spec.sequential) {
        file_.reset();
        return fail_msg("blocks arrive in any order: a destination that cannot seek needs sequential writes", -ESPIPE);
    }
    take_ahead_into_file_locked();
    // The channel may have failed since the gate looked: its end_file found
    // no file to end.
    if (auto e = core_.latch.error()) {
        file_.reset();
        return fail(e->with_context("RDMA channel unusable"));
    }
    return {};
}

SinkPipeline::Begin SinkPipeline::try_begin(const wire::RdmaMessage &begin) {
    std::lock_guard lock(mutex_);
    // A file that is done waits only for wait() to close it: the begin is
    // the next file's, sent as soon as the peer read this one's file_done
    // (a transfer command sent ahead, docs/protocol.md "Files in a row").
    if (!file_ || file_->done) return Begin::no_file;
    if (file_->begun) return Begin::already_begun;
    begin_locked(begin);
    return Begin::taken;
}

void SinkPipeline::begin_locked(const wire::RdmaMessage &begin) {
    SinkFile &f = *file_;
    core_.pool.forget_zeros();  // the peer writes into every block from here on
    if (ahead_ && begin.file_id != ahead_->file_id)
        return fail_locked(Error::msg("peer broke the RDMA protocol: it announced file " + std::to_string(begin.file_id) +
                                      ", blocks were granted ahead for file " + std::to_string(ahead_->file_id)),
                           true);
    last_begun_ = begin.file_id;
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
    // This may run in a completion handler, which never waits on a disk
    // (an fallocate can take a while): the thread in wait() reserves the
    // space, then grants; blocks filled meanwhile are written after.
    f.reserve_pending = f.spec.preallocate && f.seekable && !f.discard && f.start < f.size;
    if (ahead_) adopt_ahead_locked();
    if (f.done) return;  // adopting ended it: the peer out of line, or a /dev/null file complete
    if (f.start == f.size) return finish_locked();
    if (f.reserve_pending) {
        changed_.notify_all();
        return;
    }
    grant_locked();
    flush_grants_locked();
}

Result<FileResult> SinkPipeline::wait() {
    std::unique_lock lock(mutex_);
    SinkFile &f = *file_;  // only this thread resets file_
    auto began = std::chrono::steady_clock::now();
    wait_until_finished(
        lock, changed_, core_.params().stall_timeout_s, *f.progress, [&] { return f.done; },
        [&] {
            if (!f.reserve_pending) return false;
            reserve_then_grant(lock);
            return true;
        },
        [&] { return stopping_ || core_.stopping; }, [&](const Error &e, bool tell_peer) { fail_locked(e, tell_peer); });
    // Nothing may still be writing the caller's file after we return.
    draining_ = true;
    changed_.wait(lock, [&] { return disk_busy_ == 0; });
    draining_ = false;

    FileResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    r.bytes = f.bytes_written;
    r.notice = f.notice;
    if (f.digest) r.sha256 = f.digest->finish(f.size);
    if (f.disk) log::debug(core_.label + " event=disk_io role=sink file=" + std::to_string(f.id) + " " + f.disk->summary());
    std::optional<Error> error = f.error;
    file_.reset();
    if (error) return fail(*error);
    return r;
}

// On the thread in wait(), the lock held on entry and on return; it is let
// go around the fallocate, so completions (an abort) go on meanwhile.
void SinkPipeline::reserve_then_grant(std::unique_lock<std::mutex> &lock) {
    SinkFile &f = *file_;
    const int fd = f.spec.fd;
    const uint64_t start = f.start, length = f.size - f.start;
    const auto size = f.spec.on_prefix_grown ? ReservedSize::whole : ReservedSize::hidden;
    // Blocks granted ahead may be filled meanwhile: reserve_pending keeps
    // them in after_reserve, since a failed reservation cuts the file back
    // and would take what they wrote with it.
    lock.unlock();
    auto reserved = preallocate(fd, start, length, size);
    lock.lock();
    f.reserve_pending = false;
    // Aborted meanwhile (ABOR, Ctrl-C): wait() ends it; nothing is granted.
    if (core_.latch.tripped() || stopping_ || f.done || f.progress->abort.load()) return;
    if (!reserved) return fail_locked(reserved.error(), true);
    for (uint32_t slot : std::exchange(f.after_reserve, {})) f.to_write.push_back(slot);
    if (!f.to_write.empty()) wake_disk_threads(writers_, writer_cv_);
    grant_locked();
    flush_grants_locked();
}

// What the source needs to write bytes [offset, offset + len) into our block
// slot. A /dev/null file keeps nothing, so every slot lands in the pool's
// first block: its data passes through one block of memory, not the whole
// pool, as perftest's ib_write_bw reuses one buffer. The slots still go
// through their states one by one; only the bytes share a place.
wire::Grant SinkPipeline::grant_of(uint32_t slot, uint64_t offset, uint32_t len) const {
    uint32_t landing = file_ && file_->discard ? 0 : slot;
    return wire::Grant{slot, len, offset, reinterpret_cast<uintptr_t>(core_.pool.block(landing)), core_.res.pool_mr->rkey};
}

void SinkPipeline::grant_locked() {
    SinkFile &f = *file_;
    while (f.next_offset < f.size) {
        auto slot = f.slots.take_free(SinkBlock::lending);
        if (!slot) break;
        uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(core_.pool.block_size(), f.size - f.next_offset));
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
void SinkPipeline::lend_locked(uint32_t slot, uint64_t offset, uint32_t len, std::optional<uint32_t> contents_crc) {
    SinkFile &f = *file_;
    f.slot_offset[slot] = offset;
    f.slot_length[slot] = len;
    if (!f.discard && f.spec.block_checksums) {
        if (contents_crc) {
            put_block_trailer(core_.pool.block(slot), len, ~*contents_crc);
            core_.pool.trailer_spoiled(slot);
        } else {
            core_.pool.spoil_trailer(slot);
        }
    }
    f.grants_to_send.push_back(grant_of(slot, offset, len));
}

void SinkPipeline::flush_grants_locked() {
    SinkFile &f = *file_;
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
        send_locked(m);
    }
    f.grants_out += static_cast<unsigned>(f.grants_to_send.size());
    f.grants_to_send.clear();
}

void SinkPipeline::finish_locked() {
    // A failure that came meanwhile wins: its abort has gone to the peer.
    if (core_.latch.tripped()) return end_file_locked(*core_.latch.error());
    SinkFile &f = *file_;
    wire::RdmaMessage m;
    m.type = wire::RdmaMessageType::file_done;
    m.file_id = f.id;
    m.bytes = f.bytes_written;
    send_locked(m);
    f.done = true;
    changed_.notify_all();
    if (core_.params().grant_ahead && !core_.latch.tripped()) grant_ahead_locked();
}

// Nothing more goes to the peer once the channel failed: it was told.
void SinkPipeline::send_locked(const wire::RdmaMessage &m) {
    if (core_.latch.tripped()) return end_file_locked(*core_.latch.error());
    if (auto ok = core_.link.send(m); !ok) fail_locked(ok.error(), false);
}

Status SinkPipeline::on_notice(unsigned qp, uint32_t slot, uint32_t length, std::optional<uint32_t> file_id,
                               NoticeMode mode) {
    std::lock_guard lock(mutex_);
    if (core_.latch.tripped() || stopping_) return {};
    auto violation = [&](const std::string &what) {
        return fail_msg("peer broke the RDMA protocol on queue pair " + std::to_string(qp) + ": " + what);
    };
    // Before the next file's file_begin (the file before may still be closing).
    if (ahead_ && (!file_ || !file_->begun || file_->done)) {
        if (auto ok = park_ahead_notice_locked(slot, length, file_id, mode); !ok) return violation(ok.error().message);
        return {};
    }
    if (!file_ || !file_->begun) return violation("a block notice while no file is being received");
    SinkFile &f = *file_;
    if (file_id && *file_id != f.id) return violation("a block notice for file " + std::to_string(*file_id));
    if (f.grants_out == 0) return violation("a block notice while no grant is out");
    // Only a slot whose grant went out (not one still waiting in a batch).
    if (auto ok = f.slots.move(slot, SinkBlock::granted, SinkBlock::filled); !ok) return violation(ok.error().message);
    if (length != f.slot_length[slot])
        return violation("block " + std::to_string(slot) + " filled with " + std::to_string(length) + " bytes, " +
                         std::to_string(f.slot_length[slot]) + " were granted");
    f.notice = mode;
    --f.grants_out;
    core_.pool.trailer_sealed(f.discard ? 0 : slot, length);  // a /dev/null file's all land in block 0
    return take_filled_locked(slot);
}

// A filled block of the open file: to the writers (after the space is
// reserved), or, for /dev/null, free again at once, with no writer hop.
Status SinkPipeline::take_filled_locked(uint32_t slot) {
    SinkFile &f = *file_;
    if (f.discard) {
        if (auto ok = f.slots.move(slot, SinkBlock::filled, SinkBlock::writing); !ok) return ok;
        block_stored_locked(slot);
        return {};
    }
    if (f.reserve_pending) {
        f.after_reserve.push_back(slot);
        return {};
    }
    f.to_write.push_back(slot);
    wake_disk_threads(writers_, writer_cv_);
    return {};
}

// A damaged block is granted again for the same bytes, a few times; a
// block that keeps arriving damaged fails the file (the path corrupts data).
void SinkPipeline::checksum_failed_locked(uint32_t slot, uint32_t got, uint32_t want) {
    SinkFile &f = *file_;
    uint64_t offset = f.slot_offset[slot];
    uint32_t len = f.slot_length[slot];
    unsigned failures = ++f.checksum_failures[offset];
    char line[200];
    std::snprintf(line, sizeof line, " event=block_checksum_mismatch offset=%llu length=%u crc32c=%08x expected=%08x attempt=%u",
                  static_cast<unsigned long long>(offset), len, got, want, failures);
    log::warning(core_.label + line);
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
void SinkPipeline::block_stored_locked(uint32_t slot) {
    SinkFile &g = *file_;
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
    if (g.bytes_written == g.size - g.start) return finish_locked();
    grant_locked();
    // Batch the grants while the source still holds half the pool (it
    // has work for a round trip, and its notices will bring us back
    // here); below that, send them at once.
    bool source_low = g.grants_out < std::max(1u, core_.pool.count() / 2);
    if (source_low || g.grants_to_send.size() >= wire::kMaxGrantsPerMessage / 2) flush_grants_locked();
}

// ---- grants ahead (docs/protocol.md, "Grants ahead") --------------------------------

// Right after a file's file_done: the source's next file gets its first
// blocks now, whole blocks from wherever it will start, so its first
// WRITE need not wait for this side to hear of it. Every block is free
// here: the file that ended had none granted beyond its last byte.
void SinkPipeline::grant_ahead_locked() {
    const uint32_t block = core_.pool.block_size();
    const uint32_t count = std::min<uint32_t>(core_.pool.count(), wire::kMaxGrantsPerMessage);
    Ahead ahead{.file_id = last_begun_ + 1};
    wire::RdmaMessage m;
    m.type = wire::RdmaMessageType::grant_ahead;
    m.file_id = ahead.file_id;
    for (uint32_t k = 0; k < count; ++k) {
        const uint64_t offset = static_cast<uint64_t>(k) * block;
        core_.pool.spoil_trailer(k);
        ahead.blocks.push_back({.slot = k, .relative_offset = offset});
        m.grants[m.grant_count++] = wire::Grant{k, block, offset, reinterpret_cast<uintptr_t>(core_.pool.block(k)),
                                                core_.res.pool_mr->rkey};
    }
    ahead_ = std::move(ahead);
    send_locked(m);
}

// A file opened while blocks are out ahead: its states hold them from the
// start (granted, or filled where their notice came already).
void SinkPipeline::take_ahead_into_file_locked() {
    if (!ahead_) return;
    SinkFile &f = *file_;
    for (const AheadBlock &b : ahead_->blocks) {
        Status ok = f.slots.take(b.slot, SinkBlock::lending);
        if (ok) ok = f.slots.move(b.slot, SinkBlock::lending, SinkBlock::granted);
        if (ok && b.filled) ok = f.slots.move(b.slot, SinkBlock::granted, SinkBlock::filled);
        if (!ok) return fail_locked(ok.error(), true);
    }
}

// A notice for a block granted ahead, before its file_begin: kept, with
// its length, until the file_begin says which bytes the block holds.
Status SinkPipeline::park_ahead_notice_locked(uint32_t slot, uint32_t length, std::optional<uint32_t> file_id,
                                              NoticeMode mode) {
    Ahead &ahead = *ahead_;
    auto b = std::ranges::find_if(ahead.blocks, [slot](const AheadBlock &a) { return a.slot == slot; });
    if (b == ahead.blocks.end()) return fail_msg("a block notice while no file is being received");
    if (b->filled) return fail_msg("a second notice for block " + std::to_string(slot) + ", granted ahead");
    if (file_id && *file_id != ahead.file_id)
        return fail_msg("a block notice for file " + std::to_string(*file_id) + ", granted ahead for file " +
                        std::to_string(ahead.file_id));
    if (length == 0 || length > core_.pool.block_size())
        return fail_msg("block " + std::to_string(slot) + " filled with " + std::to_string(length) + " bytes");
    // A file opened for it holds the block already (take_ahead_into_file_locked).
    if (file_ && !file_->done)
        if (auto ok = file_->slots.move(slot, SinkBlock::granted, SinkBlock::filled); !ok) return ok;
    b->filled = length;
    ahead.notice = mode;
    core_.pool.trailer_sealed(slot, length);
    return {};
}

// The file_begin came: the blocks granted ahead become this file's first
// grants. One past the file's end goes back unused. Every block's range is
// set before any is written: a block stored may grant the next range.
void SinkPipeline::adopt_ahead_locked() {
    SinkFile &f = *file_;
    const Ahead ahead = std::move(*ahead_);
    ahead_.reset();
    const uint32_t block = core_.pool.block_size();
    std::vector<uint32_t> filled;
    for (const AheadBlock &b : ahead.blocks) {
        const uint64_t offset = f.start + b.relative_offset;
        if (offset >= f.size) {
            if (b.filled)
                return fail_locked(Error::msg("peer broke the RDMA protocol: it filled block " + std::to_string(b.slot) +
                                              ", granted ahead, past the end of the file"),
                                   true);
            if (auto ok = f.slots.move(b.slot, SinkBlock::granted, SinkBlock::free); !ok) return fail_locked(ok.error(), true);
            continue;
        }
        const auto len = static_cast<uint32_t>(std::min<uint64_t>(block, f.size - offset));
        f.slot_offset[b.slot] = offset;
        f.slot_length[b.slot] = len;
        f.next_offset = std::max(f.next_offset, offset + len);
        if (!b.filled) {
            ++f.grants_out;
            continue;
        }
        if (*b.filled != len)
            return fail_locked(Error::msg("peer broke the RDMA protocol: block " + std::to_string(b.slot) + " filled with " +
                                          std::to_string(*b.filled) + " bytes, " + std::to_string(len) + " were granted"),
                               true);
        f.notice = ahead.notice;
        filled.push_back(b.slot);
    }
    for (uint32_t slot : filled) {
        if (auto ok = take_filled_locked(slot); !ok) return fail_locked(ok.error(), true);
        if (f.done) return;  // a /dev/null file complete
    }
}

void SinkPipeline::forget_grants_ahead() {
    std::lock_guard lock(mutex_);
    ahead_.reset();
}

// ---- failure -------------------------------------------------------------------

void SinkPipeline::end_file(const Error &e) {
    std::lock_guard lock(mutex_);
    end_file_locked(e);
}

void SinkPipeline::fail_locked(const Error &e, bool tell_peer) {
    core_.fail(e, tell_peer, file_ ? file_->id : 0);
    end_file_locked(e);
}

// The current file ends with the channel's first error (e, should the
// channel be stopping); its writers and its waiter wake to see it.
void SinkPipeline::end_file_locked(const Error &e) {
    if (!file_ || file_->done) return;
    file_->error = core_.latch.error().value_or(e);
    file_->done = true;
    changed_.notify_all();
    writer_cv_.notify_all();
}

uint32_t SinkPipeline::current_file() const {
    std::lock_guard lock(mutex_);
    return file_ && file_->begun ? file_->id : 0;
}

std::optional<ProgressSample> SinkPipeline::progress() const {
    std::lock_guard lock(mutex_);
    if (!file_ || !file_->progress) return std::nullopt;
    return ProgressSample{file_->id, file_->progress->bytes.load()};
}

}  // namespace rftp::middleware::rdma
