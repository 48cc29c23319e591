#include "middleware/disk/block_io.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace rftp::middleware::disk {
namespace {

constexpr uint64_t kWakeTag = UINT64_MAX;

bool aligned(uint64_t v) { return v % kDirectAlign == 0; }

std::string where(const BlockOp &op, uint32_t done) {
    return " at offset " + std::to_string(op.offset + done);
}

}  // namespace

Result<std::unique_ptr<BlockIo>> BlockIo::create(std::span<const iovec> blocks, unsigned depth, std::string label,
                                                 Backend backend) {
    std::unique_ptr<BlockIo> io(new BlockIo(blocks, std::max(1u, depth), std::move(label)));
    io->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
    if (!io->wake_fd_) return fail_errno("eventfd");
    if (backend == Backend::positioned_calls) return io;
    // One more entry than the depth: the poll that wake() ends.
    auto ring = IoRing::create(io->depth() + 1);
    if (!ring) {
        log::debug(io->label_ + " event=disk_engine io_uring unavailable (" + ring.error().message +
                   "); reading and writing with pread/pwrite");
        return io;
    }
    if (int rc = ring->register_buffers(io->blocks_); rc < 0)
        log::debug(io->label_ + " event=disk_engine fixed buffers refused (" + std::strerror(-rc) +
                   "; RLIMIT_MEMLOCK?); io_uring with plain buffers");
    io->ring_.emplace(std::move(*ring));
    return io;
}

BlockIo::BlockIo(std::span<const iovec> blocks, unsigned depth, std::string label)
    : blocks_(blocks.begin(), blocks.end()), label_(std::move(label)), slots_(depth) {}

BlockIo::~BlockIo() {
    // The pool outlives this engine, but nothing may still be moving into
    // it: let whatever is in flight finish first.
    while (ring_ && in_flight_ > 0) (void)wait();
}

// The next piece of a block: O_DIRECT while offset, memory and length allow
// whole aligned sectors; buffered for the rest.
BlockIo::Chunk BlockIo::plan(Slot &s) const {
    const BlockOp &op = s.op;
    DiskFile &f = *op.file;
    uint8_t *data = static_cast<uint8_t *>(blocks_[op.block].iov_base) + s.done;
    uint32_t rest = op.length - s.done;
    uint64_t offset = op.offset + s.done;
    bool direct = f.seekable && f.direct_usable.load(std::memory_order_relaxed) && aligned(offset) &&
                  aligned(reinterpret_cast<uintptr_t>(data)) && rest >= kDirectAlign;
    if (direct) return {f.direct.get(), data, static_cast<uint32_t>(rest - rest % kDirectAlign), offset, true};
    return {f.fd, data, rest, offset, false};
}

std::optional<Status> BlockIo::advance(Slot &s, int64_t result) {
    const BlockOp &op = s.op;
    bool reading = op.direction == IoDirection::read;
    if (result == -EINTR || result == -EAGAIN) return std::nullopt;  // the same chunk again
    if (result == -EINVAL && s.direct) {
        // The file system took O_DIRECT at open but not for this I/O.
        op.file->refuse_direct(std::string("O_DIRECT ") + (reading ? "read" : "write") + " refused" +
                               where(op, s.done) + ": " + std::strerror(EINVAL));
        return std::nullopt;
    }
    if (result < 0)
        return Status(fail_errno((reading ? "read" : "write") + where(op, s.done), static_cast<int>(-result)));
    if (result == 0) {
        if (reading)
            return Status(fail_msg("the file ended at byte " + std::to_string(op.offset + s.done) +
                                       " before its announced size (did it shrink while being sent?)",
                                   -EIO));
        return Status(fail_msg("write" + where(op, s.done) + " wrote nothing", -EIO));
    }
    (s.direct ? op.file->direct_bytes : op.file->buffered_bytes).fetch_add(static_cast<uint64_t>(result));
    s.done += static_cast<uint32_t>(result);
    if (s.done < op.length) return std::nullopt;
    return Status{};
}

void BlockIo::start(const BlockOp &op) {
    uint32_t slot = 0;
    while (slots_[slot].busy) ++slot;  // the caller keeps fewer than depth() in flight
    slots_[slot] = Slot{op, 0, false, true};
    ++in_flight_;
    if (op.length == 0) return finish(slot, {});
    if (ring_) queue_chunk(slot);
    else run_sync(slot);
}

void BlockIo::queue_chunk(uint32_t slot) {
    Slot &s = slots_[slot];
    Chunk c = plan(s);
    s.direct = c.direct;
    io_uring_sqe *sqe = ring_->next_sqe();
    if (!sqe) {
        // Cannot happen with depth + 1 entries; fail the block rather than lose it.
        return finish(slot, fail_msg("io_uring submission queue full", -EBUSY));
    }
    // A pipe is written at its own position: offset -1.
    uint64_t offset = s.op.file->seekable ? c.offset : static_cast<uint64_t>(-1);
    bool reading = s.op.direction == IoDirection::read;
    if (ring_->has_fixed_buffers()) {
        int index = static_cast<int>(s.op.block);
        if (reading) io_uring_prep_read_fixed(sqe, c.fd, c.data, c.length, offset, index);
        else io_uring_prep_write_fixed(sqe, c.fd, c.data, c.length, offset, index);
    } else {
        if (reading) io_uring_prep_read(sqe, c.fd, c.data, c.length, offset);
        else io_uring_prep_write(sqe, c.fd, c.data, c.length, offset);
    }
    io_uring_sqe_set_data64(sqe, slot);
}

void BlockIo::run_sync(uint32_t slot) {
    Slot &s = slots_[slot];
    for (;;) {
        Chunk c = plan(s);
        s.direct = c.direct;
        ssize_t n;
        bool seekable = s.op.file->seekable;
        if (s.op.direction == IoDirection::read)
            n = ::pread(c.fd, c.data, c.length, static_cast<off_t>(c.offset));
        else
            n = seekable ? ::pwrite(c.fd, c.data, c.length, static_cast<off_t>(c.offset)) : ::write(c.fd, c.data, c.length);
        if (auto status = advance(s, n < 0 ? -errno : n)) return finish(slot, std::move(*status));
    }
}

void BlockIo::finish(uint32_t slot, Status status) {
    slots_[slot].busy = false;
    --in_flight_;
    finished_.push_back({slots_[slot].op, std::move(status)});
}

void BlockIo::arm_wake() {
    if (wake_armed_) return;
    io_uring_sqe *sqe = ring_->next_sqe();
    if (!sqe) return;  // full of block work: those completions end the wait anyway
    io_uring_prep_poll_add(sqe, wake_fd_.get(), POLLIN);
    io_uring_sqe_set_data64(sqe, kWakeTag);
    wake_armed_ = true;
}

std::vector<FinishedOp> BlockIo::wait() {
    bool woken = false;
    if (!ring_) {
        // Everything ran in start(); with nothing done, sleep until woken.
        if (finished_.empty()) {
            uint64_t n;
            (void)!::read(wake_fd_.get(), &n, sizeof n);
        }
        return std::exchange(finished_, {});
    }
    while (finished_.empty() && !woken) {
        arm_wake();
        if (int rc = ring_->submit(); rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
            // The ring is broken: fail whatever it holds, the caller fails the file.
            for (uint32_t i = 0; i < slots_.size(); ++i)
                if (slots_[i].busy) finish(i, fail_errno("io_uring submit", -rc));
            break;
        }
        io_uring_cqe *cqe = nullptr;
        if (ring_->wait(&cqe) < 0) continue;
        do {
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            int64_t res = cqe->res;
            ring_->seen(cqe);
            if (tag == kWakeTag) {
                uint64_t n;
                (void)!::read(wake_fd_.get(), &n, sizeof n);
                wake_armed_ = false;
                woken = true;
                continue;
            }
            uint32_t slot = static_cast<uint32_t>(tag);
            if (slot >= slots_.size() || !slots_[slot].busy) continue;  // not ours: ignore rather than trust
            if (auto status = advance(slots_[slot], res)) finish(slot, std::move(*status));
            else queue_chunk(slot);
        } while (ring_->peek(&cqe) == 0);
    }
    return std::exchange(finished_, {});
}

void BlockIo::wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
}

}  // namespace rftp::middleware::disk
