#include "middleware/tcp/parallel_transfer.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/tcp/block_layout.h"
#include "middleware/tcp/block_resends.h"
#include "middleware/tcp/page_cache_blocks.h"
#include "middleware/tcp/socket_io.h"
#include "middleware/tcp/stream_buffers.h"
#include "middleware/tcp/streams_digest.h"
#include "protocol/block_frame.h"

namespace rftp::middleware {
namespace {

// Keeps the first error of a group of stream threads. The first failure
// aborts the others and shuts all sockets down, so a thread blocked in the
// kernel on a healthy connection wakes up instead of waiting for a timeout.
class StreamGroup {
public:
    StreamGroup(std::span<const int> socks, TransferProgress &progress) : socks_(socks), progress_(progress) {}

    void fail(const Error &e, std::size_t stream) {
        std::lock_guard lock(mutex_);
        if (!error_) {
            error_ = e.with_context("stream " + std::to_string(stream + 1) + "/" + std::to_string(socks_.size()));
            progress_.abort.store(true);
            for (int s : socks_) ::shutdown(s, SHUT_RDWR);
        }
    }

    // One stream runs on the calling thread: a small file has one, and
    // starting a thread for it cost each file a clone.
    template <class Fn>
    Status run(Fn per_stream) {
        if (socks_.size() == 1) {
            if (auto s = per_stream(std::size_t{0}, socks_[0]); !s) fail(s.error(), 0);
            return outcome();
        }
        std::vector<std::thread> threads;
        threads.reserve(socks_.size());
        for (std::size_t i = 0; i < socks_.size(); ++i) {
            try {
                threads.emplace_back([this, i, &per_stream] {
                    if (auto s = per_stream(i, socks_[i]); !s) fail(s.error(), i);
                });
            } catch (const std::system_error &e) {
                // Out of threads: the transfer fails (its sockets shut, so the
                // streams already running end) and the process lives on.
                fail(Error{-e.code().value(), std::string("cannot start a thread: ") + e.what()}, i);
                break;
            }
        }
        for (auto &t : threads) t.join();
        return outcome();
    }

private:
    Status outcome() {
        std::lock_guard lock(mutex_);
        if (error_) {
            // An abort asked for from outside is reported as such, not as the
            // errors it provoked in the threads.
            return rftp::fail(*error_);
        }
        return {};
    }

    std::span<const int> socks_;
    TransferProgress &progress_;
    std::mutex mutex_;
    std::optional<Error> error_;
};

// Blocks each stream keeps in hand: the queue depth's worth at the disk
// (storage.queue_depth) and one more on the wire, as far as a per-transfer
// memory budget allows. Without the one on the wire, a stream's disk queue
// ran a block short whenever its thread was sending or receiving, and one
// stream copied at 0.76 of fio's copy at the same depth. A block must be
// whole in memory before its CRC32C lets it near the file, so one per
// stream is the floor. (kTransferBufferBudget, in the header.)

// A transfer of fewer bytes than that sizes them to what it moves: with many
// small files every file sets its streams up anew, and would otherwise map
// and fault in a few full blocks for a few kilobytes.
struct StreamShape {
    unsigned buffers;     // blocks in memory
    unsigned disk_depth;  // of them, at most this many read or written at once
    uint32_t buffer_bytes;
    // A transfer of one block reads or writes it with pread/pwrite on the
    // stream's thread. io_uring gains nothing for one request, and costs a
    // submit, a wait, and (for buffered I/O, which it cannot finish inline)
    // the wake-up of an io-wq worker: on files of 64 KiB its workers took
    // 10 % of rftpd's CPU and 15 % of rftp's.
    disk::BlockIo::Backend backend;
};

StreamShape stream_shape(std::size_t streams, uint32_t block_size, unsigned queue_depth, uint64_t bytes) {
    block_size = std::max<uint32_t>(block_size, 1);
    queue_depth = std::max(queue_depth, 1u);
    const uint64_t fits = kTransferBufferBudget / (std::max<std::size_t>(streams, 1) * block_size);
    const uint64_t blocks = (bytes + block_size - 1) / block_size;
    const uint64_t whole_sectors = (std::max<uint64_t>(bytes, 1) + disk::kDirectAlign - 1) / disk::kDirectAlign;
    const auto buffers = static_cast<unsigned>(std::clamp<uint64_t>(std::min(fits, blocks), 1, queue_depth + 1ull));
    return {buffers, std::min(buffers, queue_depth),
            static_cast<uint32_t>(std::min<uint64_t>(block_size, whole_sectors * disk::kDirectAlign)),
            blocks <= 1 ? disk::BlockIo::Backend::positioned_calls : disk::BlockIo::Backend::io_uring};
}

Status send_header(int sock, const ftp::FrameHeader &h) {
    auto bytes = ftp::encode_frame(h);
    return write_all(sock, bytes.data(), bytes.size());
}

// A block read from the disk arrives by DMA, outside the CPU's caches. Sent
// in pieces, each checksummed just before the kernel copies it, it crosses
// memory once instead of twice (once for the CRC, once for the copy); the
// trailer follows the data on the wire, so it can be sealed last.
constexpr uint32_t kSealedPiece = 256u << 10;

// What the digest across the streams may copy of blocks ahead of its turn
// before it gives up (streams_digest.h): half the streams' own buffers.
constexpr uint64_t kDigestCopyBudget = kTransferBufferBudget / 2;

Status send_trailer(int sock, uint32_t crc) {
    uint8_t trailer[kBlockTrailerBytes];
    put_block_trailer(trailer, 0, crc);
    return write_all(sock, trailer, sizeof trailer);
}

Status send_sealed(int sock, uint8_t *data, uint32_t length, bool checksums) {
    Crc32cRunning crc;
    const bool flip = take_fault_flip() && length > 0;
    for (uint32_t at = 0; at < length;) {
        const uint32_t n = std::min(kSealedPiece, length - at);
        if (checksums) crc.add({data + at, n});
        // Test-only: damaged after the CRC, on the wire only; the block is
        // mended once the kernel has its copy, for the digest taken after.
        const bool flipped = flip && length / 2 >= at && length / 2 < at + n;
        if (flipped) data[length / 2] ^= 0x10;
        Status sent = write_all(sock, data + at, n);
        if (flipped) data[length / 2] ^= 0x10;
        if (!sent) return sent;
        at += n;
    }
    return send_trailer(sock, checksums ? crc.value() : 0);
}

// The receiving half: the block arrives in the same pieces, each checksummed
// while the copy from the socket has just left it in the cache.
Result<TrailerCheck> receive_sealed(int sock, uint8_t *data, uint32_t length, bool checksums) {
    Crc32cRunning crc;
    for (uint32_t at = 0; at <= length;) {
        const bool trailer = at == length;
        const uint32_t n = trailer ? kBlockTrailerBytes : std::min(kSealedPiece, length - at);
        auto got = read_full(sock, data + at, n);
        if (!got) return fail(got.error());
        if (*got != n) return fail_msg("data connection closed inside a block", -ECONNRESET);
        if (trailer) break;
        if (checksums) crc.add({data + at, n});
        at += n;
    }
    if (!checksums) return TrailerCheck{};
    const uint32_t want = block_trailer(data, length), got = crc.value();
    return TrailerCheck{got == want, got, want};
}

// Memory-to-memory mode (/dev/zero as the source): every block is zeros, so
// one zeroed buffer per stream is sent again and again with a CRC taken once
// per length; reading the device would cost as much CPU as the network copy.
// Not under the test fault switch, which damages blocks one by one.
class ZeroBlocks {
public:
    explicit ZeroBlocks(uint32_t block_size) : zeros_(block_size, 0) {}
    Result<uint32_t> send(int sock, BlockRange block, bool checksums, const TransferProgress &) {
        if (checksums && block.length != crc_length_) crc_ = crc32c({zeros_.data(), block.length}), crc_length_ = block.length;
        if (auto s = write_all(sock, zeros_.data(), block.length); !s) return fail(s.error());
        return checksums ? crc_ : 0;
    }

private:
    std::vector<uint8_t> zeros_;
    uint32_t crc_ = 0, crc_length_ = UINT32_MAX;
};

// Hands out the file's blocks to the streams in file order, from a shared
// counter, so a fast connection carries more of them.
class BlockClaims {
public:
    explicit BlockClaims(const BlockLayout &layout) : layout_(layout) {}
    std::optional<BlockRange> next() {
        uint64_t index = next_.fetch_add(1);
        if (index >= layout_.count()) return std::nullopt;
        return layout_.at(index);
    }
    bool exhausted() const { return next_.load() >= layout_.count(); }

private:
    const BlockLayout &layout_;
    std::atomic<uint64_t> next_{0};
};

// What a stream sends next: a block the receiver asked for again before
// any new one.
struct NextBlock {
    BlockRange range;
    bool again;  // sent before: its bytes are counted once
};

std::optional<NextBlock> next_block(ResendRequests &resends, BlockClaims &claims) {
    if (auto again = resends.next()) return NextBlock{*again, true};
    if (auto fresh = claims.next()) return NextBlock{*fresh, false};
    return std::nullopt;
}

// A stream that has sent everything says so (EOD) and waits for the
// receiver's word. true: the receiver echoed the EOD, holding every block
// intact and written, so this side ends; false: it asked for blocks again.
// A transfer of one block where the receiver agreed to it ends unechoed:
// true at once, so the next transfer on the kept connection starts without
// a round trip (docs/protocol.md, "Downloads of one block without the echo").
Result<bool> offer_end(int sock, const ParallelSendPlan &plan, const BlockLayout &layout, ResendRequests &resends) {
    const bool unechoed =
        plan.unechoed_if_one_block && plan.end == ConnectionEnd::keep_open && layout.count() <= 1;
    const uint8_t eod = unechoed ? ftp::kFrameEodUnechoed : ftp::kFrameEod;
    if (auto s = send_header(sock, {eod, 0, plan.size}); !s) return fail(s.error());
    set_cork(sock, false);
    if (unechoed) return true;
    auto word = resends.wait();
    if (!word) return fail(word.error());
    if (*word == ReceiverWord::asked_again) {
        set_cork(sock, true);
        return false;
    }
    end_connection(sock, plan.end);
    return true;
}

// A stream whose blocks need no buffers of its own (ZeroBlocks,
// PageCacheBlocks): each block claimed is sent as it comes, payload then
// trailer.
template <class Payload>
Status send_unbuffered_stream(int sock, const ParallelSendPlan &plan, const BlockLayout &layout, BlockClaims &claims,
                              TransferProgress &progress, Payload payload) {
    ResendRequests resends(sock, layout, progress);
    set_cork(sock, true);
    for (;;) {
        if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
        if (auto s = resends.poll(); !s) return s;
        auto next = next_block(resends, claims);
        if (!next) {
            auto ended = offer_end(sock, plan, layout, resends);
            if (!ended) return fail(ended.error());
            if (*ended) return {};
            continue;
        }
        if (auto s = send_header(sock, {ftp::kFrameData, next->range.length, next->range.offset}); !s) return s;
        auto crc = payload.send(sock, next->range, plan.block_checksums, progress);
        if (!crc) return fail(crc.error());
        if (auto s = send_trailer(sock, *crc); !s) return s;
        if (!next->again) progress.bytes.fetch_add(next->range.length);
    }
}

// The digest takes each block from a buffer. So does the test fault switch
// without checksums: it damages the bytes themselves (with them,
// PageCacheBlocks damages the trailer).
constexpr const char *kInMemory = "in memory (tmpfs)";

// The disk engine's view of the file. On tmpfs it opens no O_DIRECT twin:
// direct I/O there is a copy into its pages as buffered I/O is, and the
// twin's open and close came at every file.
std::unique_ptr<disk::DiskFile> open_for_streams(int fd, bool writing, bool direct_io) {
    const bool in_memory = direct_io && disk::in_memory_file_system(fd);
    auto file = disk::DiskFile::open(fd, writing, direct_io && !in_memory);
    if (in_memory) file->buffered_reason = kInMemory;
    return file;
}

bool sends_from_page_cache(const ParallelSendPlan &plan, const disk::DiskFile &file) {
    if (!plan.from_page_cache || (plan.digest && plan.start == 0)) return false;
    if (fault_flips_armed() && !plan.block_checksums) return false;
    return bytes_are_in_page_cache(file);
}

}  // namespace

// Each stream claims the next block (or one the receiver asked for again),
// reads it through the disk engine (O_DIRECT where it can) while the
// previous one is on the wire, seals it with its CRC32C and sends header,
// payload and trailer; with plan.digest the block then goes to the digest,
// which gives its buffer back once hashed.
Result<ParallelSendResult> send_parallel(std::span<const int> socks, const ParallelSendPlan &plan,
                                         TransferProgress &progress) {
    if (socks.empty()) return fail_msg("no data connections");
    if (plan.block_size == 0) return fail_msg("block size 0");
    const BlockLayout layout(plan.start, plan.size, plan.block_size);
    BlockClaims claims(layout);
    StreamGroup group(socks, progress);
    if (memory_endpoint(plan.file_fd) == MemoryEndpoint::zeros && !fault_flips_armed()) {
        auto sent = group.run([&](std::size_t, int sock) {
            return send_unbuffered_stream(sock, plan, layout, claims, progress, ZeroBlocks(plan.block_size));
        });
        if (!sent) return fail(sent.error());
        return ParallelSendResult{};
    }
    auto file = open_for_streams(plan.file_fd, false, plan.direct_io);
    if (sends_from_page_cache(plan, *file)) {
        if (file->buffered_reason == kInMemory) file->buffered_reason += ": sent from the page cache";
        auto sent = group.run([&](std::size_t, int sock) {
            return send_unbuffered_stream(sock, plan, layout, claims, progress, PageCacheBlocks(*file));
        });
        progress.disk_summary = file->summary();
        if (!sent) return fail(sent.error());
        return ParallelSendResult{};
    }
    const StreamShape shape = stream_shape(socks.size(), plan.block_size, plan.queue_depth, plan.size - std::min(plan.start, plan.size));
    std::optional<StreamsDigest> digest;
    if (plan.digest && plan.start == 0) digest.emplace(socks.size(), kDigestCopyBudget);
    Status s = group.run([&](std::size_t index, int sock) -> Status {
        StreamBuffers buffers(shape.buffers, shape.buffer_bytes, plan.kept);
        auto io = buffers.engine(shape.disk_depth, "tcp sender", shape.backend);
        if (!io) return fail(io.error());
        ResendRequests resends(sock, layout, progress);
        struct Reading {
            disk::BlockOp op;
            bool again;
        };
        std::deque<Reading> reading;  // in claim order: sent in that order
        std::vector<bool> loaded(shape.buffers, false);
        auto give_back = [&](const std::vector<uint32_t> &slots) {
            for (uint32_t b : slots) buffers.give(b);
        };
        auto stream = [&]() -> Status {
            set_cork(sock, true);
            for (;;) {
                if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
                if (auto ok = resends.poll(); !ok) return ok;
                if (digest) give_back(digest->take_back(index));
                while (buffers.has_free() && (*io)->in_flight() < (*io)->depth()) {
                    auto next = next_block(resends, claims);
                    if (!next) break;
                    disk::BlockOp op{disk::IoDirection::read, file.get(), buffers.take(), next->range.offset,
                                     next->range.length};
                    loaded[op.block] = false;
                    (*io)->start(op);
                    reading.push_back({op, next->again});
                }
                if (reading.empty()) {
                    // Every buffer waits for the digest, and a block is left to
                    // send: one back now, to go on. (Nothing left: the end needs none.)
                    if (digest && !buffers.has_free() && (resends.pending() || !claims.exhausted())) {
                        give_back(digest->reclaim(index));
                        continue;
                    }
                    auto ended = offer_end(sock, plan, layout, resends);
                    if (!ended) return fail(ended.error());
                    if (*ended) return {};
                    continue;
                }
                const Reading next = reading.front();
                while (!loaded[next.op.block])
                    for (const disk::FinishedOp &f : (*io)->wait()) {
                        if (!f.status) return fail(f.status.error());
                        loaded[f.op.block] = true;
                    }
                reading.pop_front();
                if (auto ok = send_header(sock, {ftp::kFrameData, next.op.length, next.op.offset}); !ok) return ok;
                if (auto ok = send_sealed(sock, buffers.block(next.op.block), next.op.length, plan.block_checksums); !ok)
                    return ok;
                if (!next.again) progress.bytes.fetch_add(next.op.length);
                if (digest)
                    digest->give(index, next.op.block, buffers.block(next.op.block), next.op.offset, next.op.length);
                else
                    buffers.give(next.op.block);
            }
        };
        Status sent = stream();
        // The digest may still read this stream's buffers, which go with it.
        if (digest) give_back(digest->finish_stream(index, !sent, progress.abort));
        return sent;
    });
    progress.disk_summary = file->summary();
    if (!s) return fail(s.error());
    ParallelSendResult result;
    if (digest) result.sha256 = digest->finish(plan.size);
    return result;
}

Result<ParallelReceiveResult> receive_parallel(std::span<const int> socks, const ParallelReceivePlan &plan,
                                               RangeSet &received, TransferProgress &progress) {
    if (socks.empty()) return fail_msg("no data connections");
    if (plan.max_block_size == 0) return fail_msg("no block size agreed");
    // Memory-to-memory mode: blocks for /dev/null are checked, counted and dropped.
    const bool discard = memory_endpoint(plan.file_fd) == MemoryEndpoint::discard;
    if (!discard && !is_seekable(plan.file_fd)) return fail_msg("parallel streams need a seekable destination file");
    std::mutex size_mutex;
    std::optional<uint64_t> announced_size;

    auto file = open_for_streams(plan.file_fd, true, plan.direct_io);
    // Every range handed to the disk, on any connection: a frame's header is
    // not under its CRC32C, so a block labelled with a range already written
    // or in flight is refused before it can overwrite verified bytes.
    RangeSet claimed(plan.start);
    // Two blocks labelled with one range: one label is wrong, and the block
    // it sent astray may already be written where another belongs.
    std::atomic<bool> mislabelled{false};
    // No frame may reach past max_size, nor start before start: a receiver
    // that knows the size needs no larger buffers than what is left of it.
    const uint64_t most = plan.max_size - std::min(plan.start, plan.max_size);
    const StreamShape shape = stream_shape(socks.size(), plan.max_block_size, plan.queue_depth, most);
    const uint32_t max_frame = shape.buffer_bytes;
    std::optional<StreamsDigest> digest;
    if (plan.digest && plan.start == 0 && !discard) digest.emplace(socks.size(), kDigestCopyBudget);
    StreamGroup group(socks, progress);
    Status s = group.run([&](std::size_t index, int sock) -> Status {
        StreamBuffers buffers(shape.buffers, shape.buffer_bytes, plan.kept);
        auto io = buffers.engine(shape.disk_depth, "tcp receiver", shape.backend);
        if (!io) return fail(io.error());
        DamagedBlocks damaged(sock, std::to_string(index + 1) + "/" + std::to_string(socks.size()), progress,
                              /*deferred=*/plan.unechoed_ok);
        // A buffer is free again once both its write and the digest are done with it.
        std::vector<uint8_t> users(shape.buffers, 0);
        auto let_go = [&](uint32_t slot) {
            if (--users[slot] == 0) buffers.give(slot);
        };
        auto let_go_all = [&](const std::vector<uint32_t> &slots) {
            for (uint32_t b : slots) let_go(b);
        };
        // A block counts once it is on disk: only then may the resume journal cover it.
        auto record = [&](uint32_t slot, uint64_t offset, uint32_t length) -> Status {
            let_go(slot);
            if (!received.add(offset, length)) return fail_msg("overlapping blocks");
            progress.bytes.fetch_add(length);
            if (plan.on_prefix_grown) plan.on_prefix_grown(received.contiguous_end());
            return {};
        };
        auto take_written = [&](std::vector<disk::FinishedOp> done) -> Status {
            for (const disk::FinishedOp &f : done) {
                if (!f.status) return fail(f.status.error());
                if (auto ok = record(f.op.block, f.op.offset, f.op.length); !ok) return ok;
            }
            return {};
        };
        auto drain = [&]() -> Status {
            while ((*io)->pending())
                if (auto ok = take_written((*io)->wait()); !ok) return ok;
            return {};
        };
        // Whatever the ending, blocks already handed to the disk are waited
        // for and recorded: the prefix kept for a resume is all that is there.
        uint64_t eod_at = 0;  // this connection's end-of-data frame
        bool unechoed = false;  // ... which wants no echo
        // Only where this side agreed to it, and only after one block at
        // most. A damaged block there is not sent again (the sender went
        // on to its next transfer): the transfer fails instead.
        auto unechoed_end = [&](uint64_t size) -> Status {
            if (!plan.unechoed_ok)
                return fail_msg("an end-of-data frame that wants no echo, which this side did not agree to");
            if (size > plan.start && size - plan.start > plan.max_block_size)
                return fail_msg("an end-of-data frame that wants no echo after more than one block");
            unechoed = true;
            if (damaged.awaited() > 0)
                return fail_msg("a block failed its CRC32C check; the only block of a file is not sent again on "
                                "kept connections: fetch the file again",
                                -EBADMSG);
            return {};
        };
        auto stream = [&]() -> Status {
            uint8_t raw[ftp::kFrameHeaderSize];
            for (;;) {
                // Stopped from outside its streams (a failed checkpoint of
                // the resume journal): the peer is still sending, so a frame
                // boundary comes soon.
                if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
                auto got = read_full(sock, raw, sizeof raw);
                if (!got) return fail(got.error());
                // The sender ended the connection: ECONNRESET, so that a
                // client asks the server's reply why before saying this.
                if (*got != sizeof raw) {
                    if (damaged.awaited() > 0)
                        return fail_msg("data connection closed before the damaged blocks it brought came again",
                                        -ECONNRESET);
                    return fail_msg("data connection closed before its end-of-data frame", -ECONNRESET);
                }
                auto h = ftp::decode_frame(raw, max_frame, plan.max_size);
                if (!h) return fail(h.error().with_context("bad frame"));
                if (h->descriptor == ftp::kFrameEod || h->descriptor == ftp::kFrameEodUnechoed) {
                    {
                        std::lock_guard lock(size_mutex);
                        if (announced_size && *announced_size != h->offset)
                            return fail_msg("streams disagree on the file size");
                        announced_size = h->offset;
                    }
                    eod_at = h->offset;
                    if (h->descriptor == ftp::kFrameEodUnechoed)
                        return unechoed_end(h->offset);
                    // The sender sends the blocks asked for again, then ends again.
                    if (auto asked = damaged.ask_deferred(); !asked) return asked;
                    if (damaged.awaited() > 0) continue;
                    return {};  // confirmed below, once the blocks are written
                }
                if (h->offset < plan.start) return fail_msg("block before the restart offset");
                // Block k starts at start + k x block: a label off that grid
                // is damaged or forged, and its bytes go nowhere.
                if ((h->offset - plan.start) % plan.max_block_size != 0)
                    return fail_msg("a block at byte " + std::to_string(h->offset) +
                                    " is not where a block starts (the restart offset plus a multiple of " +
                                    std::to_string(plan.max_block_size) + ")");
                while (!buffers.has_free()) {
                    if (digest) let_go_all(digest->take_back(index));
                    if (buffers.has_free()) break;
                    if ((*io)->pending()) {
                        if (auto ok = take_written((*io)->wait()); !ok) return ok;
                    } else if (digest) {
                        // Every buffer waits for the digest: one back now, to go on.
                        let_go_all(digest->reclaim(index, damaged.awaited() == 0));
                    } else {
                        return fail_msg("no buffer free and none being written");  // cannot happen
                    }
                }
                uint32_t slot = buffers.take();
                users[slot] = 1;
                uint8_t *data = buffers.block(slot);
                const uint32_t count = static_cast<uint32_t>(h->count);
                auto body = receive_sealed(sock, data, count, plan.block_checksums);
                if (!body) return fail(body.error());
                // Checked before it is written: a damaged block never reaches
                // the file, and is asked for again on this connection.
                if (!body->intact) {
                    let_go(slot);
                    if (auto ok = damaged.ask_again(h->offset, count, *body); !ok) return ok;
                    continue;
                }
                damaged.arrived(h->offset);
                if (!claimed.add(h->offset, count)) {
                    let_go(slot);
                    mislabelled = true;
                    return fail_msg("a block at byte " + std::to_string(h->offset) + " overlaps one already received");
                }
                if (discard) {
                    if (auto ok = record(slot, h->offset, count); !ok) return ok;
                } else {
                    // One block more in memory than at the disk: this one may wait its turn.
                    while ((*io)->in_flight() >= (*io)->depth())
                        if (auto ok = take_written((*io)->wait()); !ok) return ok;
                    // The write first: giving the block may hash other streams' blocks too.
                    if (digest) ++users[slot];
                    (*io)->start({disk::IoDirection::write, file.get(), slot, h->offset, count});
                    if (digest) digest->give(index, slot, data, h->offset, count);
                }
            }
        };
        Status ended = stream();
        Status drained = drain();
        Status result = !ended ? ended : drained;
        // Every block this connection brought is intact and written. A
        // receiver that failed only closes: the sender can tell the two apart.
        if (result && !unechoed) damaged.confirm_end(eod_at, plan.end);
        // The digest may still read this stream's buffers, which go with it.
        if (digest) let_go_all(digest->finish_stream(index, !result, progress.abort));
        return result;
    });
    if (!discard) progress.disk_summary = file->summary();
    // Nothing received can be vouched for then: the resume starts over.
    if (mislabelled) received.clear();
    if (!s) return fail(s.error());
    if (!announced_size || *announced_size < plan.start) return fail_msg("no valid end-of-data frame");
    if (!received.covers_exactly(*announced_size))
        return fail_msg("blocks missing: received data does not cover the file exactly");
    ParallelReceiveResult result{*announced_size, std::nullopt};
    if (digest) result.sha256 = digest->finish(*announced_size);
    return result;
}

}  // namespace rftp::middleware
