#include "middleware/disk/block_io.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "common/wait_ready.h"

namespace rftp::middleware::disk {
namespace {

// Not UINT64_MAX: liburing keeps that tag (LIBURING_UDATA_TIMEOUT) for its
// own timeouts and, on kernels before 5.11, drops every completion that
// carries it, so the wake poll's would never be seen.
constexpr uint64_t kWakeTag = UINT64_MAX - 1;

bool aligned(uint64_t v) { return v % kDirectAlign == 0; }

std::string where(const BlockOp &op, uint32_t done) {
    return " at offset " + std::to_string(op.offset + done);
}

}  // namespace

Result<std::unique_ptr<BlockIo>> BlockIo::create(std::span<const iovec> blocks, unsigned depth, std::string label,
                                                 Backend backend, Buffers buffers, RingCache *rings) {
    std::unique_ptr<BlockIo> io(new BlockIo(blocks, std::max(1u, depth), std::move(label)));
    // Two parts per block, and the poll that wake() ends.
    const unsigned entries = 2 * io->depth() + 1;
    if (backend == Backend::io_uring && buffers == Buffers::plain && rings) {
        io->rings_ = rings;
        if (auto kept = rings->take(entries)) {
            io->ring_.emplace(std::move(kept->ring));
            io->wake_fd_ = std::move(kept->wake_fd);
            return io;
        }
    }
    io->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC));
    if (!io->wake_fd_) return fail_errno("eventfd");
    if (backend == Backend::positioned_calls) return io;
    auto ring = IoRing::create(entries);
    if (!ring) {
        log::debug(io->label_ + " event=disk_engine io_uring unavailable (" + ring.error().message +
                   "); reading and writing with pread/pwrite");
        return io;
    }
    if (buffers == Buffers::plain) {
        io->ring_.emplace(std::move(*ring));
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
    drain();
    if (!rings_ || !ring_ || ring_broken_) return;
    // A poll left armed is tied to the thread that armed it: it may be
    // cancelled when that thread ends, or fire into the next user's wait,
    // which runs on another thread. Its completion is taken here instead,
    // so the ring goes back empty.
    if (wake_armed_) {
        wake();
        while (wake_armed_ && !ring_broken_) (void)wait();
    }
    if (!ring_broken_) rings_->give({std::move(*ring_), std::move(wake_fd_)});
}

// Whole aligned sectors of an aligned block go direct; an unaligned tail,
// or all of a block that starts off a sector boundary, goes buffered.
void BlockIo::split(Slot &s) const {
    const BlockOp &op = s.op;
    const DiskFile &f = *op.file;
    auto *data = static_cast<uint8_t *>(blocks_[op.block].iov_base);
    bool direct = f.seekable && f.direct_usable.load(std::memory_order_relaxed) && aligned(op.offset) &&
                  aligned(reinterpret_cast<uintptr_t>(data)) && op.length >= kDirectAlign;
    uint32_t head = direct ? static_cast<uint32_t>(op.length - op.length % kDirectAlign) : 0;
    unsigned n = 0;
    if (head > 0) s.parts[n++] = Part{op.offset, 0, head, 0, true, true};
    if (head < op.length) s.parts[n++] = Part{op.offset + head, head, op.length - head, 0, false, true};
    s.live = n;
}

bool BlockIo::advance(Slot &s, Part &p, int64_t result) {
    const BlockOp &op = s.op;
    bool reading = op.direction == IoDirection::read;
    // Of two parts that fail, the one nearer the start tells the truth (a
    // file that ended early ended at its first missing byte).
    auto failed = [&](Error e) {
        if (!s.error || p.offset + p.done < s.error_offset) s.error = std::move(e), s.error_offset = p.offset + p.done;
        return true;
    };
    if (result == -EAGAIN) wait_ready(p.direct ? op.file->direct.get() : op.file->fd, reading);
    if (result == -EINTR || result == -EAGAIN) return false;  // the same piece again
    if (result == -EINVAL && p.direct) {
        // The file system took O_DIRECT at open but not for this I/O.
        op.file->refuse_direct(std::string("O_DIRECT ") + (reading ? "read" : "write") + " refused" +
                               where(op, p.at + p.done) + ": " + std::strerror(EINVAL));
        p.direct = false;
        return false;
    }
    if (result < 0) return failed(Error::from_errno((reading ? "read" : "write") + where(op, p.at + p.done),
                                                    static_cast<int>(-result)));
    if (result == 0) {
        if (reading)
            return failed(file_ended_early(p.offset + p.done));
        return failed(Error{-EIO, "write" + where(op, p.at + p.done) + " wrote nothing"});
    }
    (p.direct ? op.file->direct_bytes : op.file->buffered_bytes).fetch_add(static_cast<uint64_t>(result));
    p.done += static_cast<uint32_t>(result);
    // A short direct transfer leaves a rest that may no longer be aligned.
    if (p.done < p.length && p.direct && (p.done % kDirectAlign || (p.length - p.done) % kDirectAlign)) p.direct = false;
    return p.done == p.length;
}

void BlockIo::start(const BlockOp &op) {
    if (in_flight_ >= depth()) {
        // The caller's mistake, told as the operation's failure rather than
        // a slot overrun: callers may hold more buffers than the depth.
        finished_.push_back({op, fail_msg("disk engine: " + std::to_string(depth()) + " operations already in flight",
                                          -EBUSY)});
        return;
    }
    uint32_t slot = 0;
    while (slots_[slot].busy) ++slot;
    Slot &s = slots_[slot];
    s = Slot{};
    s.op = op;
    s.busy = true;
    ++in_flight_;
    if (op.length == 0) return finish(slot, {});
    // Reads in flight together would take a stream's bytes in any order.
    if (op.direction == IoDirection::read && !op.file->seekable)
        return finish(slot, fail_msg("a source that cannot seek cannot be read in blocks", -ESPIPE));
    split(s);
    if (!ring_) return run_sync(slot);
    for (unsigned i = 0; i < 2; ++i)
        if (s.parts[i].live) queue_part_or_move(slot, i);
    // Submitted now: the caller may go off to the network before it waits,
    // and the disk should be busy meanwhile. A failure here is retried (and
    // then reported) by wait().
    (void)ring_->submit();
}

void BlockIo::queue_part(uint32_t slot, unsigned part) {
    Slot &s = slots_[slot];
    Part &p = s.parts[part];
    io_uring_sqe *sqe = ring_->next_sqe();
    if (!sqe) {
        // Cannot happen with room for two parts per block; fail the block rather than lose it.
        advance(s, p, -EBUSY);
        p.live = false;
        return part_done(slot);
    }
    DiskFile &f = *s.op.file;
    int fd = p.direct ? f.direct.get() : f.fd;
    uint8_t *data = static_cast<uint8_t *>(blocks_[s.op.block].iov_base) + p.at + p.done;
    uint32_t length = p.length - p.done;
    // A pipe is written at its own position: offset -1.
    uint64_t offset = f.seekable ? p.offset + p.done : static_cast<uint64_t>(-1);
    bool reading = s.op.direction == IoDirection::read;
    if (ring_->has_fixed_buffers()) {
        int index = static_cast<int>(s.op.block);
        if (reading) io_uring_prep_read_fixed(sqe, fd, data, length, offset, index);
        else io_uring_prep_write_fixed(sqe, fd, data, length, offset, index);
    } else {
        if (reading) io_uring_prep_read(sqe, fd, data, length, offset);
        else io_uring_prep_write(sqe, fd, data, length, offset);
    }
    io_uring_sqe_set_data64(sqe, slot * 2 + part);
}

int64_t BlockIo::move_blocking(const Slot &s, const Part &p) const {
    int fd = p.direct ? s.op.file->direct.get() : s.op.file->fd;
    uint8_t *data = static_cast<uint8_t *>(blocks_[s.op.block].iov_base) + p.at + p.done;
    uint32_t length = p.length - p.done;
    off_t offset = static_cast<off_t>(p.offset + p.done);
    ssize_t n;
    if (s.op.direction == IoDirection::read) n = ::pread(fd, data, length, offset);
    else n = s.op.file->seekable ? ::pwrite(fd, data, length, offset) : ::write(fd, data, length);
    return n < 0 ? -errno : n;
}

void BlockIo::move_whole(Slot &s, Part &p) {
    while (!advance(s, p, move_blocking(s, p))) {
    }
}

void BlockIo::run_sync(uint32_t slot) {
    Slot &s = slots_[slot];
    for (Part &p : s.parts) {
        if (!p.live) continue;
        move_whole(s, p);
        if (s.error) break;
    }
    finish(slot, s.error ? Status(fail(*s.error)) : Status{});
}

int64_t BlockIo::move_instead_of_kernel(const Slot &s, const Part &p) {
    if (!kernel_gave_up_) {
        kernel_gave_up_ = true;
        log::warning(label_ + " event=disk_engine io_uring gave a request up (it could not start a worker thread: "
                              "the process's thread limit, such as systemd's TasksMax or a container's pids.max?); "
                              "this engine's buffered I/O is done with pread/pwrite from here on");
    }
    return move_blocking(s, p);
}

// Once the kernel gave one up, a buffered part (the kind that needs a
// worker) would wait through io_uring's tries to start one before being
// given up again: it is done on this thread straight away.
void BlockIo::queue_part_or_move(uint32_t slot, unsigned part) {
    Slot &s = slots_[slot];
    Part &p = s.parts[part];
    if (!kernel_gave_up_ || p.direct || !s.op.file->seekable) return queue_part(slot, part);
    move_whole(s, p);
    p.live = false;
    part_done(slot);
}

void BlockIo::part_done(uint32_t slot) {
    Slot &s = slots_[slot];
    if (--s.live == 0) finish(slot, s.error ? Status(fail(*s.error)) : Status{});
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
        int rc = ring_->submit();
        if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
            break_ring("io_uring submit", rc);
            break;
        }
        io_uring_cqe *cqe = nullptr;
        // The kernel could not take the requests just now: none of ours may
        // be in flight to end a wait (nor the wake poll), so submit again soon.
        const bool refused = rc == -EAGAIN || rc == -EBUSY;
        if (int w = refused ? ring_->wait_for(&cqe, 1'000'000) : ring_->wait(&cqe); w < 0) {
            if (w == -EINTR || w == -ETIME || w == -EAGAIN) continue;
            // Anything else comes back every time: waiting again would spin.
            break_ring("io_uring wait", w);
            break;
        }
        do {
            uint64_t tag = io_uring_cqe_get_data64(cqe);
            int64_t res = cqe->res;
            ring_->seen(cqe);
            if (tag == kWakeTag) {
                // A cancelled poll leaves the count at zero, and this
                // read would then block.
                uint64_t n;
                if (res > 0) (void)!::read(wake_fd_.get(), &n, sizeof n);
                wake_armed_ = false;
                woken = true;
                continue;
            }
            uint32_t slot = static_cast<uint32_t>(tag / 2);
            unsigned part = static_cast<unsigned>(tag % 2);
            if (slot >= slots_.size() || !slots_[slot].busy || !slots_[slot].parts[part].live) continue;  // not ours
            Slot &s = slots_[slot];
            // This engine never cancels a request: the kernel gave it up,
            // because io_uring could not start a worker thread for a
            // request that would block. This thread does it instead.
            // Not where the file has no offsets (O_APPEND, a pipe): what the
            // kernel wrote before it gave up is not told, and would be
            // written twice; that fails, as it did.
            if (res == -ECANCELED && s.op.file->seekable) res = move_instead_of_kernel(s, s.parts[part]);
            if (advance(s, s.parts[part], res)) {
                s.parts[part].live = false;
                part_done(slot);
            } else {
                queue_part_or_move(slot, part);
            }
        } while (ring_->peek(&cqe) == 0);
    }
    // Pieces queued again while reaping go to the kernel now, not at the
    // next call: the caller may be off to the network for a while.
    (void)ring_->submit();
    return std::exchange(finished_, {});
}

// Fails whatever the ring holds; the caller fails the file. Requests already
// with the kernel may still use their buffers (broken()).
void BlockIo::break_ring(const char *step, int rc) {
    for (uint32_t i = 0; i < slots_.size(); ++i)
        if (slots_[i].busy) finish(i, fail_errno(step, -rc));
    ring_broken_ = true;
}

void BlockIo::wake() {
    uint64_t one = 1;
    (void)!::write(wake_fd_.get(), &one, sizeof one);
}

}  // namespace rftp::middleware::disk
