#include "middleware/tcp/stream_transfer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "common/wait_ready.h"
#include "middleware/tcp/socket_io.h"
#include "middleware/tcp/stream_buffers.h"

namespace rftp::middleware {
namespace {

// 4 MiB: large enough for direct I/O to pay, small enough that a slow
// stream reaches the disk (and a resume point) every so often.
constexpr uint32_t kEngineBlock = 4u << 20;
constexpr unsigned kEngineDepth = 4;

// A stream that pauses this long has its bytes so far written anyway: what
// arrived is on disk (and counts for a resume) even while the peer idles.
constexpr int kIdleFlushMs = 100;

// recv + write until end of stream: for what splice cannot write to.
// seekable as disk::DiskFile says: an O_APPEND descriptor is not (written in
// order, never at offsets).
Result<uint64_t> receive_by_copy(int sock, int file_fd, bool seekable, uint64_t offset, TransferProgress &progress) {
    std::vector<char> buf(256u << 10);
    for (;;) {
        auto n = recv_some(sock, buf.data(), buf.size(), progress);
        if (!n) return fail(n.error());
        if (*n == 0) return offset;
        if (auto s = write_to_file(file_fd, seekable, offset, buf.data(), *n); !s) return fail(s.error());
        offset += *n;
        progress.bytes.fetch_add(*n, std::memory_order_relaxed);
    }
}

Result<uint64_t> receive_through_engine(int sock, disk::DiskFile &file, uint64_t offset, TransferProgress &progress,
                                        StreamCache *kept, const std::function<void(uint64_t)> &on_prefix_grown) {
    // One block more than the disk's queue: the next fills from the socket
    // while the queue is full (parallel_transfer.cpp, StreamShape).
    StreamBuffers buffers(kEngineDepth + 1, kEngineBlock, kept);
    auto io = buffers.engine(kEngineDepth, "tcp stream receiver");
    if (!io) return fail(io.error());
    std::optional<Error> error;
    uint64_t first_failed = UINT64_MAX;
    uint64_t end = offset;                // past the last block handed to the disk
    std::vector<uint64_t> writing;        // offsets of blocks not yet written, at most the queue depth
    uint64_t prefix_told = offset;
    // Written for sure: everything before the first block still being
    // written, or that failed. Told even after the stream broke, as the
    // blocks in flight land.
    auto tell_prefix = [&] {
        if (!on_prefix_grown) return;
        uint64_t prefix = std::min(end, first_failed);
        if (!writing.empty()) prefix = std::min(prefix, *std::ranges::min_element(writing));
        if (prefix > prefix_told) on_prefix_grown(prefix_told = prefix);
    };
    auto take = [&](std::vector<disk::FinishedOp> done) {
        for (const disk::FinishedOp &f : done) {
            buffers.give(f.op.block);
            std::erase(writing, f.op.offset);
            if (!f.status) {
                if (!error) error = f.status.error();
                first_failed = std::min(first_failed, f.op.offset);
            } else {
                progress.bytes.fetch_add(f.op.length, std::memory_order_relaxed);
            }
        }
        tell_prefix();
    };
    for (bool ended = false; !ended && !error;) {
        if (progress.abort.load()) {
            error = Error{-ECANCELED, "transfer aborted"};
            break;
        }
        while (!buffers.has_free()) take((*io)->wait());
        if (error) break;
        uint32_t slot = buffers.take();
        std::size_t filled = 0;
        // Up to the next block boundary of the file, so blocks stay aligned
        // for direct I/O after a short one.
        std::size_t want = kEngineBlock - end % kEngineBlock;
        Status got = fill_from_socket(sock, buffers.block(slot), want, kIdleFlushMs, filled, ended);
        // Bytes that arrived are the file's, in order, even when the stream then broke.
        if (filled == 0) {
            buffers.give(slot);
        } else {
            while (!error && (*io)->in_flight() >= (*io)->depth()) take((*io)->wait());
            if (error) {
                buffers.give(slot);
                break;
            }
            (*io)->start({disk::IoDirection::write, &file, slot, end, static_cast<uint32_t>(filled)});
            writing.push_back(end);
        }
        end += filled;
        if (!got) error = got.error();
    }
    while ((*io)->pending()) take((*io)->wait());
    if (error) {
        // Blocks written past the one that failed would make the file's size
        // a false resume point: cut them off, or say that it could not be.
        if (first_failed < end && ::ftruncate(file.fd, static_cast<off_t>(first_failed)) != 0)
            return fail(Error{error->code, error->message + "; and the file could not be cut back to its written "
                                                              "prefix: " + std::strerror(errno)});
        return fail(*error);
    }
    tell_prefix();
    return end;
}

}  // namespace

Status send_stream(int sock, int file_fd, uint64_t offset, uint64_t end, TransferProgress &progress) {
    // Cork so headers-free sendfile chunks leave in full segments; uncorking flushes the tail.
    set_cork(sock, true);
    Status s = end > offset ? copy_file_to_socket(sock, file_fd, offset, end - offset, progress) : Status{};
    set_cork(sock, false);
    return s;
}

Result<uint64_t> receive_stream(int sock, int file_fd, uint64_t offset, TransferProgress &progress, bool direct_io,
                                StreamCache *kept, disk::Placement placement,
                                const std::function<void(uint64_t)> &on_prefix_grown) {
    auto file = disk::DiskFile::open(file_fd, true, direct_io, placement);
    if (file->seekable && file->regular) {
        auto received = receive_through_engine(sock, *file, offset, progress, kept, on_prefix_grown);
        progress.disk_summary = file->summary();
        return received;
    }
    // Not seekable (a pipe, a terminal) or O_APPEND (a shell's >>; the one
    // regular file DiskFile calls not seekable): written in order through
    // the descriptor. splice refuses an O_APPEND file.
    const bool seekable = file->seekable;
    if (file->regular) return receive_by_copy(sock, file_fd, seekable, offset, progress);
    auto pipe = SplicePipe::create();
    if (!pipe) return fail(pipe.error());
    // Unknown length: move pipe-sized chunks until the peer closes. A chunk
    // that hits end of stream early is the normal end, not an error, so ask
    // for one pipe-full at a time and stop at the first empty splice.
    for (;;) {
        if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
        ssize_t in = ::splice(sock, nullptr, pipe->write_end(), nullptr, pipe->capacity(), SPLICE_F_MOVE | SPLICE_F_MORE);
        if (in < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return fail(Error{-ETIMEDOUT, "data connection stalled (timeout)"});
            if (errno == EINVAL || errno == ENOSYS) return receive_by_copy(sock, file_fd, seekable, offset, progress);
            return fail_errno("splice from data connection");
        }
        if (in == 0) return offset;
        std::size_t pending = static_cast<std::size_t>(in);
        while (pending > 0) {
            loff_t off = static_cast<loff_t>(offset);
            ssize_t out = ::splice(pipe->read_end(), nullptr, file_fd, seekable ? &off : nullptr, pending, SPLICE_F_MOVE);
            if (out < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN) {
                    if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
                    wait_ready(file_fd, false);
                    continue;
                }
                if (errno != EINVAL && errno != ENOSYS) return fail_errno("write to file");
                // The sink refuses splice: drain the pipe by hand (read(2):
                // a pipe is not a socket), then copy from here on.
                std::vector<char> buf(pending);
                for (std::size_t got = 0; got < pending;) {
                    ssize_t n = ::read(pipe->read_end(), buf.data() + got, pending - got);
                    if (n < 0 && errno == EINTR) continue;
                    if (n < 0) return fail_errno("draining splice pipe");
                    if (n == 0) return fail_msg("splice pipe ended early");
                    got += static_cast<std::size_t>(n);
                }
                if (auto s = write_to_file(file_fd, seekable, offset, buf.data(), pending); !s) return fail(s.error());
                offset += pending;
                progress.bytes.fetch_add(pending, std::memory_order_relaxed);
                return receive_by_copy(sock, file_fd, seekable, offset, progress);
            }
            pending -= static_cast<std::size_t>(out);
            offset += static_cast<uint64_t>(out);
            progress.bytes.fetch_add(static_cast<uint64_t>(out), std::memory_order_relaxed);
        }
    }
}

}  // namespace rftp::middleware
