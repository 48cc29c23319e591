#include "middleware/tcp/parallel_transfer.h"

#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "middleware/tcp/socket_io.h"
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

    template <class Fn>
    Status run(Fn per_stream) {
        std::vector<std::thread> threads;
        threads.reserve(socks_.size());
        for (std::size_t i = 0; i < socks_.size(); ++i)
            threads.emplace_back([this, i, &per_stream] {
                if (auto s = per_stream(i, socks_[i]); !s) fail(s.error(), i);
            });
        for (auto &t : threads) t.join();
        std::lock_guard lock(mutex_);
        if (error_) {
            // An abort asked for from outside is reported as such, not as the
            // errors it provoked in the threads.
            return rftp::fail(*error_);
        }
        return {};
    }

private:
    std::span<const int> socks_;
    TransferProgress &progress_;
    std::mutex mutex_;
    std::optional<Error> error_;
};

Status send_header(int sock, const ftp::FrameHeader &h) {
    auto bytes = ftp::encode_frame(h);
    return write_all(sock, bytes.data(), bytes.size());
}

}  // namespace

Status send_parallel(std::span<const int> socks, const ParallelSendPlan &plan, TransferProgress &progress) {
    if (socks.empty()) return fail_msg("no data connections");
    if (plan.block_size == 0) return fail_msg("block size 0");
    std::atomic<uint64_t> next_block{0};
    StreamGroup group(socks, progress);
    return group.run([&](std::size_t, int sock) -> Status {
        set_cork(sock, true);
        for (;;) {
            if (progress.abort.load()) return fail(Error{-ECANCELED, "transfer aborted"});
            uint64_t index = next_block.fetch_add(1);
            if (plan.size <= plan.start || index >= (plan.size - plan.start + plan.block_size - 1) / plan.block_size) break;
            uint64_t offset = plan.start + index * plan.block_size;
            uint64_t count = std::min<uint64_t>(plan.block_size, plan.size - offset);
            if (auto s = send_header(sock, {ftp::kFrameData, count, offset}); !s) return s;
            if (auto s = copy_file_to_socket(sock, plan.file_fd, offset, count, progress); !s) return s;
        }
        if (auto s = send_header(sock, {ftp::kFrameEod, 0, plan.size}); !s) return s;
        set_cork(sock, false);
        ::shutdown(sock, SHUT_WR);
        return {};
    });
}

Result<ParallelReceiveResult> receive_parallel(std::span<const int> socks, const ParallelReceivePlan &plan,
                                               RangeSet &received, TransferProgress &progress) {
    if (socks.empty()) return fail_msg("no data connections");
    const bool seekable = is_seekable(plan.file_fd);
    if (!seekable) return fail_msg("parallel streams need a seekable destination file");
    std::mutex size_mutex;
    std::optional<uint64_t> announced_size;

    StreamGroup group(socks, progress);
    Status s = group.run([&](std::size_t, int sock) -> Status {
        auto pipe = SplicePipe::create();
        if (!pipe) return fail(pipe.error());
        uint8_t raw[ftp::kFrameHeaderSize];
        for (;;) {
            auto got = read_full(sock, raw, sizeof raw);
            if (!got) return fail(got.error());
            if (*got != sizeof raw) return fail_msg("data connection closed before its end-of-data frame");
            auto h = ftp::decode_frame(raw, plan.max_block_size, plan.max_size);
            if (!h) return fail(h.error().with_context("bad frame"));
            if (h->descriptor == ftp::kFrameEod) {
                {
                    std::lock_guard lock(size_mutex);
                    if (announced_size && *announced_size != h->offset)
                        return fail_msg("streams disagree on the file size");
                    announced_size = h->offset;
                }
                char extra;
                auto tail = read_full(sock, &extra, 1);
                if (!tail) return fail(tail.error());
                if (*tail != 0) return fail_msg("data after the end-of-data frame");
                return {};
            }
            if (h->offset < plan.start) return fail_msg("block before the restart offset");
            if (auto c = copy_socket_to_file(sock, plan.file_fd, true, h->offset, h->count, *pipe, progress); !c)
                return c;
            if (!received.add(h->offset, h->count)) return fail_msg("overlapping blocks");
            if (plan.on_prefix_grown) plan.on_prefix_grown(received.contiguous_end());
        }
    });
    if (!s) return fail(s.error());
    if (!announced_size || *announced_size < plan.start) return fail_msg("no valid end-of-data frame");
    if (!received.covers_exactly(*announced_size))
        return fail_msg("blocks missing: received data does not cover the file exactly");
    return ParallelReceiveResult{*announced_size};
}

}  // namespace rftp::middleware
