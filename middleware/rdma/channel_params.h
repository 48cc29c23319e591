// The shape of one RDMA channel, as both ends agreed through RADR
// (docs/protocol.md): how many data queue pairs, the block size, how many
// RDMA WRITEs each queue pair keeps in flight, and this side's pool.
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

#include "middleware/disk/disk_options.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

// Receives each side keeps posted on the control queue pair (the initial
// control credits of the peer); fixed by the protocol.
inline constexpr unsigned kControlDepth = 32;
// A receive buffer on a data queue pair holds one block_done notice.
inline constexpr std::size_t kNoticeSlot = 64;
inline constexpr std::size_t kControlSlot = wire::kRdmaMaxMessage;

// Completion workers when nobody chose: on one CPU a hand-off to a worker
// can only add a context switch (the handlers never block), so there the
// dispatcher runs them itself.
inline unsigned default_workers() { return std::thread::hardware_concurrency() <= 1 ? 0 : 2; }

struct ChannelParams {
    unsigned streams = 4;            // data queue pairs
    uint32_t block_size = 4u << 20;  // bytes per block and per RDMA WRITE
    unsigned iodepth = 8;            // RDMA WRITEs in flight per data queue pair
    unsigned blocks = 64;            // blocks in this side's registered pool
    unsigned workers = 2;            // completion worker threads; 0: the dispatcher runs the handlers
    unsigned stall_timeout_s = 60;   // no progress for this long fails the file
    // As a sink, grant the peer's next file ahead when a file is done
    // (docs/protocol.md, "Grants ahead"): only where the peer takes them.
    bool grant_ahead = false;
    disk::DiskOptions disk;          // how blocks are read from and written to files

    // Each block is followed by room for its CRC32C trailer; a whole page, so
    // every block stays page-aligned (direct I/O needs that).
    static constexpr std::size_t kTrailerRoom = 4096;
    std::size_t block_stride() const { return static_cast<std::size_t>(block_size) + kTrailerRoom; }
    std::size_t pool_bytes() const { return static_cast<std::size_t>(blocks) * block_stride(); }
    unsigned queue_pairs() const { return streams + 1; }
};

}  // namespace rftp::middleware::rdma
