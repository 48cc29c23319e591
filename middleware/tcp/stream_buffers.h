// A TCP stream's blocks in memory, and the disk engine that reads or writes
// them: in huge pages where the system has them (block_memory.h: the disk
// gets each block whole), each with room for a CRC32C trailer.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/result.h"
#include "middleware/block_memory.h"
#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/tcp/stream_cache.h"

namespace rftp::middleware {

class StreamBuffers {
public:
    // kept: what the session keeps (stream_cache.h): the memory is taken
    // from it and given back, and so is the disk engine's ring; null maps
    // and unmaps the buffers, and sets up and tears down the ring.
    StreamBuffers(unsigned count, uint32_t block_size, StreamCache *kept = nullptr)
        : stride_(static_cast<std::size_t>(block_size) + disk::kDirectAlign),
          memory_(kept ? kept->buffers.take(count * stride_) : BlockMemory::allocate(count * stride_)),
          kept_(kept) {
        for (unsigned i = 0; i < count && memory_; ++i) iovecs_.push_back({block(i), stride_});
        for (unsigned i = count; i > 0 && memory_; --i) free_.push_back(i - 1);
    }
    // The engine goes first, after its last request. If its ring broke,
    // requests may still be in the kernel: the memory is then neither
    // given back for the next transfer nor unmapped (BlockMemory::abandon).
    ~StreamBuffers() {
        // Drained first: the ring may break while its last requests land.
        if (engine_) engine_->drain();
        bool broken = engine_ && engine_->broken();
        engine_.reset();
        if (broken) {
            memory_.abandon();
            log::warning("a stream's disk engine broke: its " + std::to_string(iovecs_.size()) +
                         " buffers are left unused, as the kernel may still use them");
        } else if (kept_) {
            kept_->buffers.give(std::move(memory_));
        }
    }
    StreamBuffers(const StreamBuffers &) = delete;
    StreamBuffers &operator=(const StreamBuffers &) = delete;
    bool valid() const { return static_cast<bool>(memory_); }
    uint8_t *block(uint32_t i) const { return memory_.data() + i * stride_; }

    // Which blocks are not in use: take one (has_free() must hold), give it back when done.
    bool has_free() const { return !free_.empty(); }
    uint32_t take() {
        uint32_t b = free_.back();
        free_.pop_back();
        return b;
    }
    void give(uint32_t b) { free_.push_back(b); }

    // The disk engine that reads or writes these buffers, owned here so it
    // is gone before the memory is (see the destructor). One per object.
    Result<disk::BlockIo *> engine(unsigned depth, const std::string &label,
                                   disk::BlockIo::Backend backend = disk::BlockIo::Backend::io_uring) {
        if (!valid()) return fail_msg("out of memory for stream buffers", -ENOMEM);
        auto io = disk::BlockIo::create(iovecs_, depth, label, backend, disk::BlockIo::Buffers::plain,
                                        kept_ ? &kept_->rings : nullptr);
        if (!io) return fail(io.error());
        engine_ = std::move(*io);
        return engine_.get();
    }

private:
    std::size_t stride_;
    BlockMemory memory_;
    StreamCache *kept_;
    std::vector<iovec> iovecs_;
    std::vector<uint32_t> free_;
    std::unique_ptr<disk::BlockIo> engine_;
};

}  // namespace rftp::middleware
