// A channel's state for the one file it moves at a time: SourceFile on the
// sending side (its blocks, the grants they carry, what the readers and
// the sender do next), SinkFile on the receiving side (its granted blocks,
// what the writers do next). Each is guarded by its pipeline's lock.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "middleware/disk/disk_file.h"
#include "middleware/integrity/ordered_digest.h"
#include "middleware/range_set.h"
#include "middleware/rdma/block_states.h"
#include "middleware/rdma/file_specs.h"
#include "middleware/rdma/grant_ledger.h"
#include "middleware/transfer_progress.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

// A file's progress as the channel's monitor logs it.
struct ProgressSample {
    uint32_t file = 0;
    uint64_t bytes = 0;
};

struct SourceFile {
    uint32_t id = 0;
    SendSpec spec;
    TransferProgress *progress = nullptr;
    BlockStates<SourceBlock> blocks;
    std::vector<wire::Grant> block_grant;      // what each loading/ready/posted block carries
    // A chain of blocks is posted at once with only its last work request
    // signalled; that completion frees the whole chain (indexed by its last block).
    std::vector<std::vector<uint32_t>> chain_of;
    GrantLedger grants;                        // which grants are blocks of this file, and how often each came
    std::deque<wire::Grant> waiting;           // granted, no local block yet
    std::unique_ptr<disk::DiskFile> disk;      // what the readers read (none for /dev/zero)
    std::unique_ptr<OrderedDigest> digest;     // spec.digest: read blocks wait here for their turn
    std::deque<uint32_t> to_load;              // blocks the readers fill
    std::deque<uint32_t> to_send;              // blocks the sender posts
    RangeSet sent;                             // bytes whose WRITE completed
    uint64_t bytes_acked = 0;                  // ... and how many, each counted once
    bool zeros = false;                        // memory-to-memory: the source is /dev/zero
    // /dev/zero: the block of zeros (sealed) that every full-length WRITE
    // reads, so the file touches one block of memory, as ib_write_bw does.
    std::optional<uint32_t> zero_block;
    bool confirmed = false;                    // the sink's file_done arrived
    bool done = false;
    std::optional<Error> error;

    bool reads_zero_block(const wire::Grant &g, uint32_t block_size) const {
        return zero_block && g.length == block_size;
    }
    // Every block back (the zero block is held to the end by design).
    bool all_returned() const { return blocks.free_count() + (zero_block ? 1 : 0) == blocks.size(); }
};
struct SinkFile {
    uint32_t id = 0;
    ReceiveSpec spec;
    TransferProgress *progress = nullptr;
    RangeSet *received = nullptr;
    bool begun = false;                        // the source's file_begin arrived
    bool reserve_pending = false;              // its space is to be reserved before the first grant
    uint64_t start = 0, size = 0, next_offset = 0, bytes_written = 0;
    uint64_t write_cursor = 0;                 // sequential: the next offset to write
    bool seekable = true;
    bool discard = false;                      // memory-to-memory: the sink is /dev/null
    std::unique_ptr<disk::DiskFile> disk;      // what the writers write (none for /dev/null)
    std::unique_ptr<OrderedDigest> digest;     // spec.digest: written blocks wait here for their turn
    BlockStates<SinkBlock> slots;
    std::vector<uint64_t> slot_offset;
    std::vector<uint32_t> slot_length;
    std::deque<uint32_t> to_write;
    std::vector<uint32_t> after_reserve;       // filled while its space is reserved: written after
    std::vector<wire::Grant> grants_to_send;   // freed blocks granted again, sent in batches
    unsigned grants_out = 0;                   // granted and sent, not yet notified back
    NoticeMode notice = NoticeMode::unknown;   // how the source's notices arrived
    std::unordered_map<uint64_t, unsigned> checksum_failures;  // by offset: each is sent again, a few times
    unsigned damaged_blocks = 0;                                // all of them, this file
    bool done = false;
    std::optional<Error> error;
};

}  // namespace rftp::middleware::rdma
