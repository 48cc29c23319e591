// What a source accepts from its sink's grants. The sink lends its blocks
// one file block at a time, in file order: [start + k x block, +block), the
// last one shorter. A range comes again only after its checksum failed, and
// the sink gives up on a range after kMaxBlockAttempts tries, so a grant
// that is not a block of the file, or a range granted more often than that,
// is a peer breaking the protocol: without this check an authenticated but
// broken peer could keep one range (or one byte) moving forever. Resends
// are bounded per file too (kMaxResentBlocksPerFile), and with them what
// the ledger remembers.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "common/result.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

class GrantLedger {
public:
    GrantLedger() = default;
    GrantLedger(uint64_t start, uint64_t size, uint32_t block_size);

    // Counts the grant, or says what is wrong with it (-EPROTO).
    Status accept(const wire::Grant &g);

private:
    uint64_t start_ = 0, size_ = 0;
    uint32_t block_ = 1;
    uint64_t granted_end_ = 0;                       // past the furthest range granted so far
    std::unordered_map<uint64_t, unsigned> again_;  // by offset: grants after the first
    unsigned resends_ = 0;                           // all grants after the first, this file
};

}  // namespace rftp::middleware::rdma
