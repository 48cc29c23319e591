#include "middleware/rdma/source_pipeline.h"

#include <chrono>
#include <cstring>
#include <system_error>

#include "common/log.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/file_wait.h"

namespace rftp::middleware::rdma {

Status SourcePipeline::start() {
    in_flight_.assign(core_.params().queue_pairs(), 0);
    auto readers = make_disk_threads(core_.pool, core_.params().disk, core_.params().disk.readers, core_.label + " reader");
    if (!readers) return fail(readers.error());
    readers_ = std::move(*readers);
    // Out of threads, std::thread throws: that is this channel's failure,
    // not the process's. stop() joins those started.
    try {
        for (unsigned i = 0; i < readers_.size(); ++i) threads_.emplace_back([this, i] { reader_loop(i); });
        threads_.emplace_back([this] { sender_loop(); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("start the RDMA source threads: ") + e.what(), -e.code().value());
    }
    return {};
}

void SourcePipeline::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        wake_disk_threads(readers_, reader_cv_);
    }
    changed_.notify_all();
    sender_cv_.notify_all();
    for (auto &t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

bool SourcePipeline::seal_block(BlockPool &pool, uint32_t index, uint32_t len, uint32_t crc) {
    // The block's CRC32C goes right after its data, and travels in the same
    // WRITE. The test-only fault switch damages the data after that, as a
    // bad link would.
    uint8_t *block = pool.block(index);
    put_block_trailer(block, len, crc);
    pool.trailer_sealed(index, len);
    if (len == 0 || !take_fault_flip()) return false;
    block[len / 2] ^= 0x10;
    return true;
}

Result<FileResult> SourcePipeline::send(const SendSpec &spec, TransferProgress &progress, uint32_t file_id) {
    const ChannelParams &params = core_.params();
    std::unique_lock lock(mutex_);
    file_.emplace();
    SourceFile &f = *file_;
    f.id = file_id;
    f.spec = spec;
    f.progress = &progress;
    f.blocks = BlockStates<SourceBlock>(params.blocks);
    f.grants = GrantLedger(spec.start, spec.size, params.block_size);
    f.block_grant.resize(params.blocks);
    f.chain_of.resize(params.blocks);
    f.zeros = memory_endpoint(spec.fd) == MemoryEndpoint::zeros;
    if (!f.zeros) f.disk = disk::DiskFile::open(spec.fd, false, params.disk.direct_io);
    if (spec.digest && spec.start == 0 && !f.zeros) f.digest = std::make_unique<OrderedDigest>();
    if (f.zeros) hold_zero_block_locked();
    // The channel may have failed since the gate looked: its end_file found
    // no file to end.
    if (auto e = core_.latch.error()) {
        file_.reset();
        return fail(e->with_context("RDMA channel unusable"));
    }
    wire::RdmaMessage begin;
    begin.type = wire::RdmaMessageType::file_begin;
    begin.file_id = f.id;
    begin.start = spec.start;
    begin.size = spec.size;
    if (auto ok = core_.link.send(begin); !ok) fail_locked(ok.error(), false);
    // Grants ahead are for the next id only: any others lapsed.
    const bool ahead_for_this = announced_ + 1 == file_id;
    announced_ = file_id;
    const std::vector<wire::Grant> ahead = std::exchange(ahead_, {});
    if (ahead_for_this && !f.done)
        if (auto ok = use_grants_ahead_locked(ahead); !ok) fail_locked(ok.error(), true);

    auto began = std::chrono::steady_clock::now();
    wait_until_finished(
        lock, changed_, params.stall_timeout_s, progress,
        [&] { return f.done || (f.confirmed && f.all_returned()); }, [] { return false; },
        [&] { return stopping_ || core_.stopping; }, [&](const Error &e, bool tell_peer) { fail_locked(e, tell_peer); });
    // Nothing may still be reading the caller's file after we return.
    draining_ = true;
    changed_.wait(lock, [&] { return disk_busy_ == 0 && !sender_busy_; });
    draining_ = false;

    FileResult r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    r.notice = notice_mode_;
    r.bytes = f.bytes_acked;
    if (f.digest) r.sha256 = f.digest->finish(spec.size);
    if (f.disk) log::debug(core_.label + " event=disk_io role=source file=" + std::to_string(f.id) + " " + f.disk->summary());
    std::optional<Error> error;
    if (!f.confirmed || f.error) error = f.error.value_or(Error::msg("transfer did not finish"));
    file_.reset();
    if (error) return fail(*error);
    return r;
}

// Every full-length block of /dev/zero is the same bytes, so one block holds
// them for the whole file and every full WRITE reads it: the file's data
// passes through one block of memory, not the whole pool, as perftest's
// ib_write_bw reuses one buffer. Short pieces use their own block (their
// trailer lands inside the zeros). Not with a pool of fewer than four blocks
// (the held block would halve what can be in flight), nor under the test
// fault switch, which damages blocks one by one.
void SourcePipeline::hold_zero_block_locked() {
    SourceFile &f = *file_;
    if (core_.pool.count() < 4 || fault_flips_armed()) return;
    auto held = f.blocks.take_free(SourceBlock::zeros);
    if (!held) return;  // every block is free when a file begins; this only keeps the API honest
    uint32_t z = *held;
    uint32_t len = core_.pool.block_size();
    if (!core_.pool.zeroed(z)) std::memset(core_.pool.block(z), 0, len);
    seal_block(core_.pool, z, len, zero_trailer_locked(z, len));
    core_.pool.set_zeroed(z, true);
    f.zero_block = z;
}

// The trailer of len zeros for this file: their CRC32C (taken once per
// length from block, which holds zeros) or 0 with checksums off.
uint32_t SourcePipeline::zero_trailer_locked(uint32_t block, uint32_t len) {
    if (!file_->spec.block_checksums) return 0;
    if (len != zero_crc_length_) zero_crc_ = crc32c({core_.pool.block(block), len}), zero_crc_length_ = len;
    return zero_crc_;
}

Status SourcePipeline::on_grants(const wire::RdmaMessage &m) {
    std::lock_guard lock(mutex_);
    if (!file_ || file_->done || m.file_id != file_->id)
        return fail_msg("peer granted blocks for a file this side is not sending");
    SourceFile &f = *file_;
    for (std::size_t i = 0; i < m.grant_count; ++i) {
        const wire::Grant &g = m.grants[i];
        if (auto ok = f.grants.accept(g); !ok) return ok;
        // More than a sink's pool can lend: a peer trying to make this
        // side queue grants without end.
        if (f.waiting.size() >= wire::kMaxGrantsOutstanding)
            return fail(Error{-EPROTO, "peer granted more than " + std::to_string(wire::kMaxGrantsOutstanding) +
                                           " blocks not yet filled"});
        f.waiting.push_back(g);
    }
    assign_blocks_locked();
    return {};
}

Status SourcePipeline::on_grants_ahead(const wire::RdmaMessage &m) {
    std::lock_guard lock(mutex_);
    const uint32_t block = core_.pool.block_size();
    // One message a file, of whole blocks in order from the file's start.
    if (m.file_id == ahead_for_)
        return fail_msg("peer granted blocks ahead twice for file " + std::to_string(m.file_id));
    for (std::size_t i = 0; i < m.grant_count; ++i) {
        const wire::Grant &g = m.grants[i];
        if (g.length != block || g.offset != i * static_cast<uint64_t>(block))
            return fail_msg("peer granted ahead a block that is not the next whole one (offset " +
                            std::to_string(g.offset) + ", length " + std::to_string(g.length) + ")");
    }
    std::vector<wire::Grant> grants(m.grants.begin(), m.grants.begin() + m.grant_count);
    const bool under_way = file_ && !file_->done && m.file_id == file_->id;
    if (!under_way && m.file_id != announced_ + 1)
        return fail_msg("peer granted blocks ahead for file " + std::to_string(m.file_id) + "; the next this side "
                        "announces is " + std::to_string(announced_ + 1));
    ahead_for_ = m.file_id;
    // The file they are for is under way already: its file_begin crossed them.
    if (under_way) return use_grants_ahead_locked(grants);
    ahead_ = std::move(grants);
    return {};
}

// Grants ahead become the file's own: the block at start + k x block, as
// long as the file has bytes there. One past its end is not used.
Status SourcePipeline::use_grants_ahead_locked(const std::vector<wire::Grant> &ahead) {
    SourceFile &f = *file_;
    const uint64_t block = core_.pool.block_size();
    for (const wire::Grant &g : ahead) {
        const uint64_t offset = f.spec.start + g.offset;
        if (offset >= f.spec.size) break;
        const wire::Grant own{g.slot, static_cast<uint32_t>(std::min(block, f.spec.size - offset)), offset, g.addr, g.rkey};
        if (auto ok = f.grants.accept(own); !ok) return ok;
        f.waiting.push_back(own);
    }
    assign_blocks_locked();
    return {};
}

void SourcePipeline::forget_grants_ahead() {
    std::lock_guard lock(mutex_);
    ahead_.clear();
}

// A block this side sent keeps its data and trailer in its own pool. The
// trailer is spoiled when the file ends, so should the block later be
// lent to the peer, a notice without a fresh WRITE fails its check
// instead of passing these bytes off as the peer's (docs/protocol.md,
// "Grants ahead").
Status SourcePipeline::on_file_done(const wire::RdmaMessage &m) {
    std::lock_guard lock(mutex_);
    if (!file_ || m.file_id != file_->id) return fail_msg("peer confirmed a file this side is not sending");
    if (m.status != 0) {
        // As the peer's abort: its errno is its own, its text says why.
        fail_locked(Error{-ECONNABORTED, "the receiving side failed: " + m.text}, false);
    } else if (m.bytes != file_->spec.size - file_->spec.start) {
        fail_locked(Error::msg("the receiving side confirmed " + std::to_string(m.bytes) + " bytes, " +
                               std::to_string(file_->spec.size - file_->spec.start) + " were sent"),
                    true);
    } else {
        file_->confirmed = true;
        changed_.notify_all();
    }
    return {};
}

void SourcePipeline::assign_blocks_locked() {
    SourceFile &f = *file_;
    BlockPool &pool = core_.pool;
    bool to_reader = false, to_sender = false;
    while (!f.waiting.empty()) {
        auto b = f.blocks.take_free(SourceBlock::loading);
        if (!b) break;
        f.block_grant[*b] = f.waiting.front();
        f.waiting.pop_front();
        // /dev/zero needs no reader: a full block is sent from the zero block
        // (its own memory unused), another already zeroed only needs its trailer.
        bool from_zero_block = f.reads_zero_block(f.block_grant[*b], pool.block_size());
        if (from_zero_block || (f.zeros && pool.zeroed(*b))) {
            uint32_t len = f.block_grant[*b].length;
            // A short trailer lands inside the block's zeros: it is no longer all zeros.
            if (!from_zero_block &&
                (seal_block(pool, *b, len, zero_trailer_locked(*b, len)) || len < pool.block_size()))
                pool.set_zeroed(*b, false);
            if (auto ok = f.blocks.move(*b, SourceBlock::loading, SourceBlock::ready); !ok)
                return fail_locked(ok.error(), true);
            f.to_send.push_back(*b);
            to_sender = true;
        } else {
            f.to_load.push_back(*b);
            to_reader = true;
        }
    }
    if (to_reader) wake_disk_threads(readers_, reader_cv_);
    if (to_sender) sender_cv_.notify_one();
}

void SourcePipeline::make_ready_locked(uint32_t block) {
    if (auto ok = file_->blocks.move(block, SourceBlock::loading, SourceBlock::ready); !ok)
        return fail_locked(ok.error(), true);
    file_->to_send.push_back(block);
    sender_cv_.notify_one();
}

void SourcePipeline::on_send_done(unsigned qp, uint32_t last_block) {
    std::lock_guard lock(mutex_);
    if (!file_ || core_.latch.tripped()) return;
    SourceFile &f = *file_;
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

// ---- failure -------------------------------------------------------------------

void SourcePipeline::end_file(const Error &e) {
    std::lock_guard lock(mutex_);
    end_file_locked(e);
}

void SourcePipeline::fail_locked(const Error &e, bool tell_peer) {
    core_.fail(e, tell_peer, file_ ? file_->id : 0);
    end_file_locked(e);
}

// The current file ends with the channel's first error (e, should the
// channel be stopping); its threads and its waiter wake to see it.
void SourcePipeline::end_file_locked(const Error &e) {
    if (!file_ || file_->done) return;
    file_->error = core_.latch.error().value_or(e);
    file_->done = true;
    changed_.notify_all();
    reader_cv_.notify_all();
    sender_cv_.notify_all();
}

uint32_t SourcePipeline::current_file() const {
    std::lock_guard lock(mutex_);
    return file_ ? file_->id : 0;
}

std::optional<ProgressSample> SourcePipeline::progress() const {
    std::lock_guard lock(mutex_);
    if (!file_ || !file_->progress) return std::nullopt;
    return ProgressSample{file_->id, file_->progress->bytes.load()};
}

}  // namespace rftp::middleware::rdma
