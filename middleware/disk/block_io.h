// The disk engine of one reader or writer thread. It keeps up to its queue
// depth of block reads or writes in flight on its own io_uring, with the
// block pool registered as fixed buffers, so a block moves between the disk
// and registered memory with no copy in user space. Each block is split into
// an O_DIRECT part (aligned offset and memory, whole sectors) and a buffered
// part (an unaligned tail or head, or all of it where the file system
// refuses direct I/O), and short transfers are continued until it is whole.
// Positioned I/O only: no shared file offset, so blocks can finish in any
// order and still land where they belong.
//
// Where io_uring is unavailable (an old kernel, a seccomp filter) the same
// plan runs on pread/pwrite, one block at a time. A request the kernel gives
// up on (-ECANCELED: io_uring could not start a worker thread for it, at the
// process's thread limit) is done with pread/pwrite on this thread, and so
// is every buffered part after it.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "middleware/disk/disk_file.h"
#include "middleware/disk/io_ring.h"
#include "middleware/disk/ring_cache.h"

namespace rftp::middleware::disk {

enum class IoDirection { read, write };

struct BlockOp {
    IoDirection direction = IoDirection::read;
    DiskFile *file = nullptr;  // outlives the operation
    uint32_t block = 0;        // index into the pool: the buffer, and what the result is known by
    uint64_t offset = 0;       // in the file; ignored for a pipe
    uint32_t length = 0;
};

struct FinishedOp {
    BlockOp op;
    Status status;
};

class BlockIo {
public:
    enum class Backend { io_uring, positioned_calls };
    // Registering buffers pins (and first touches) every page of them: worth
    // it for a pool that lives as long as an RDMA channel, not for the
    // buffers of one short TCP transfer.
    enum class Buffers { fixed, plain };
    // blocks: the pool, one buffer per block. label prefixes the debug lines.
    // io_uring falls back to positioned calls where the kernel refuses it.
    // rings: with plain buffers, where the ring comes from and goes back to
    // (ring_cache.h); null sets one up and tears it down.
    static Result<std::unique_ptr<BlockIo>> create(std::span<const iovec> blocks, unsigned depth, std::string label,
                                                   Backend backend = Backend::io_uring, Buffers buffers = Buffers::fixed,
                                                   RingCache *rings = nullptr);
    bool uses_io_uring() const { return ring_.has_value(); }
    bool uses_fixed_buffers() const { return ring_ && ring_->has_fixed_buffers(); }
    // A submit failed hard: what it held was failed back, but requests it
    // had already passed to the kernel may still read or write their
    // buffers, and nothing can say when they stop.
    bool broken() const { return ring_broken_; }
    ~BlockIo();
    BlockIo(const BlockIo &) = delete;
    BlockIo &operator=(const BlockIo &) = delete;

    unsigned depth() const { return static_cast<unsigned>(slots_.size()); }
    unsigned in_flight() const { return in_flight_; }
    // Operations started and not yet returned by wait() or take_finished().
    bool pending() const { return in_flight_ > 0 || !finished_.empty(); }

    // Starts op, submitted at once. With depth() already in flight it is
    // not started: it comes back from the next wait() as failed (-EBUSY).
    void start(const BlockOp &op);
    // Submits what was started, then blocks until at least one operation
    // finished or wake() was called; returns the finished operations.
    std::vector<FinishedOp> wait();
    // What finished already, without waiting.
    std::vector<FinishedOp> take_finished() { return std::exchange(finished_, {}); }
    // Ends a wait() early, from any thread.
    void wake();
    // Waits until nothing is in flight (or the ring broke meanwhile: ask
    // broken() after). The destructor does the same; an owner that must know
    // whether its buffers are free again asks after this, not before.
    void drain() {
        while (ring_ && in_flight_ > 0) (void)wait();
    }

private:
    void break_ring(const char *step, int rc);

    // A block goes as up to two parts in flight at once: the whole aligned
    // sectors through the O_DIRECT descriptor, the rest buffered. Both are
    // submitted together, so neither waits for this thread to come back.
    struct Part {
        uint64_t offset = 0;  // in the file
        uint32_t at = 0;      // in the block's buffer
        uint32_t length = 0;
        uint32_t done = 0;
        bool direct = false;
        bool live = false;
    };
    struct Slot {
        BlockOp op;
        Part parts[2];
        unsigned live = 0;          // parts still moving
        std::optional<Error> error; // of the part that failed nearest the block's start
        uint64_t error_offset = 0;
        bool busy = false;
    };

    BlockIo(std::span<const iovec> blocks, unsigned depth, std::string label);
    void split(Slot &s) const;
    // Takes one part's result; true once that part is whole or failed.
    bool advance(Slot &s, Part &p, int64_t result);
    void queue_part(uint32_t slot, unsigned part);
    // One pread or pwrite of the rest of a part, on this thread: -errno or bytes moved.
    int64_t move_blocking(const Slot &s, const Part &p) const;
    // move_blocking until the part is whole or failed.
    void move_whole(Slot &s, Part &p);
    void run_sync(uint32_t slot);
    // move_blocking for a request the kernel gave up on, said once per engine.
    int64_t move_instead_of_kernel(const Slot &s, const Part &p);
    void queue_part_or_move(uint32_t slot, unsigned part);
    void part_done(uint32_t slot);
    void arm_wake();
    void finish(uint32_t slot, Status status);

    std::vector<iovec> blocks_;
    std::string label_;
    std::optional<IoRing> ring_;  // empty: pread/pwrite
    std::vector<Slot> slots_;
    unsigned in_flight_ = 0;
    UniqueFd wake_fd_;            // eventfd: wake() writes, wait() reads
    bool wake_armed_ = false;     // a poll on wake_fd_ is in the ring
    std::vector<FinishedOp> finished_;
    RingCache *rings_ = nullptr;  // where the ring goes back to, if anywhere
    bool ring_broken_ = false;    // a submit failed: not for anyone else
    bool kernel_gave_up_ = false;  // a request, for want of a worker thread
};

}  // namespace rftp::middleware::disk
