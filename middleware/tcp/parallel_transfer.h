// One file over N data connections in framed blocks (docs/protocol.md,
// "Parallel streams"). One thread per connection; blocks are handed out from
// a shared counter, so a fast connection carries more of them. Each thread
// reads or writes its blocks through the disk engine (io_uring, O_DIRECT
// where the file system takes it), and every block carries a CRC32C that the
// receiver checks before the block touches the file (unless both ends agreed
// to go without).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "common/result.h"
#include "middleware/disk/disk_options.h"
#include "middleware/range_set.h"
#include "middleware/tcp/connection_end.h"
#include "middleware/tcp/stream_cache.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware {

struct ParallelSendPlan {
    int file_fd = -1;
    uint64_t start = 0;        // REST offset
    uint64_t size = 0;         // file size: blocks cover [start, size)
    uint32_t block_size = 8u << 20;
    bool direct_io = true;     // read with O_DIRECT where the file system takes it
    // Seal each frame with its CRC32C; off only as agreed with the receiver
    // (OPTS BLOCKSUM NONE): the trailer then travels as zero.
    bool block_checksums = true;
    unsigned queue_depth = disk::DiskOptions{}.queue_depth;  // block reads each stream keeps in flight
    ConnectionEnd end = ConnectionEnd::shut_down;  // after the echo (connection_end.h)
    StreamCache *kept = nullptr;  // the session's kept buffers and rings (stream_cache.h); null: none
    // Take the file's SHA-256 from the blocks as they are sent
    // (streams_digest.h); only for a whole file (start 0).
    bool digest = false;
    // Send from the page cache with sendfile where the file's bytes are read
    // from it anyway (page_cache_blocks.h); not with plan.digest. rftpd sends
    // this way; rftp does not, as its uploads from tmpfs measured 1.5 × the
    // CPU this way (docs/middleware.md).
    bool from_page_cache = false;
    // Where the receiver agreed (OPTS DATAKEEP ON UNECHOED), a transfer of
    // at most one block ends at its EOD frame, which says so: the streams
    // return without waiting for an echo, and no block is sent again.
    bool unechoed_if_one_block = false;
};

struct ParallelSendResult {
    // The SHA-256 of [0, size) as sent, when plan.digest and the digest
    // kept up; otherwise the file must be read for it.
    std::optional<std::string> sha256;
};

// Sends the plan over every socket in socks, then an EOD frame on each;
// once the receiver echoes it, ends each connection as plan.end says.
// Does not close the sockets.
Result<ParallelSendResult> send_parallel(std::span<const int> socks, const ParallelSendPlan &plan,
                                         TransferProgress &progress);

struct ParallelReceivePlan {
    int file_fd = -1;
    uint64_t start = 0;           // REST offset; frames below it are refused
    uint32_t max_block_size = 64u << 20;
    uint64_t max_size = 1ull << 62;
    // Called, from any stream thread, after the complete prefix grew (for a
    // ResumeJournal). Must be quick and thread-safe.
    std::function<void(uint64_t contiguous_end)> on_prefix_grown;
    bool direct_io = true;        // write with O_DIRECT where the file system takes it
    bool block_checksums = true;  // check each frame's CRC32C (off: as agreed, the trailers are zero)
    unsigned queue_depth = disk::DiskOptions{}.queue_depth;  // block writes each stream keeps in flight
    ConnectionEnd end = ConnectionEnd::shut_down;  // after the echo (connection_end.h)
    StreamCache *kept = nullptr;  // as above
    // Take the file's SHA-256 from the blocks as they arrive intact; only
    // for a whole file (start 0) into a file (not /dev/null).
    bool digest = false;
    // This side agreed to unechoed ends (OPTS DATAKEEP ON UNECHOED): a
    // damaged block is asked for again only after the EOD frame, so that
    // nothing this side sends can meet the sender's next transfer; an
    // unechoed EOD frame ends the connection's part without an echo, and a
    // damaged block there fails the transfer.
    bool unechoed_ok = false;
};

struct ParallelReceiveResult {
    uint64_t size = 0;  // file size announced by the EOD frames
    std::optional<std::string> sha256;  // as ParallelSendResult's, of what arrived
};

// Receives until every socket delivered its EOD frame, echoes it once the
// connection's blocks are written, and ends the connection as send_parallel does. On any
// failure the error says what went wrong; received tells, in either case,
// which ranges were written (contiguous_end() is where a resume starts).
Result<ParallelReceiveResult> receive_parallel(std::span<const int> socks, const ParallelReceivePlan &plan,
                                               RangeSet &received, TransferProgress &progress);

}  // namespace rftp::middleware
