#include "middleware/rdma/grant_ledger.h"

#include <algorithm>
#include <string>

#include "middleware/integrity/block_checksum.h"

namespace rftp::middleware::rdma {

GrantLedger::GrantLedger(uint64_t start, uint64_t size, uint32_t block_size)
    : start_(start), size_(size), block_(std::max<uint32_t>(block_size, 1)), granted_end_(start) {}

Status GrantLedger::accept(const wire::Grant &g) {
    auto range = [&] { return "bytes " + std::to_string(g.offset) + "+" + std::to_string(g.length); };
    if (g.offset < start_ || g.offset >= size_ || (g.offset - start_) % block_ != 0)
        return fail_msg("peer granted " + range() + ", which is not a block of bytes [" + std::to_string(start_) + ", " +
                            std::to_string(size_) + ") in blocks of " + std::to_string(block_),
                        -EPROTO);
    uint64_t expected = std::min<uint64_t>(block_, size_ - g.offset);
    if (g.length != expected)
        return fail_msg("peer granted " + range() + ", the block at that offset has " + std::to_string(expected) +
                            " bytes",
                        -EPROTO);
    if (g.offset >= granted_end_) {
        granted_end_ = g.offset + g.length;
        return {};
    }
    // Granted before: a resend after a failed checksum, which the sink
    // asks for at most kMaxBlockAttempts - 1 times per range.
    if (++resends_ > kMaxResentBlocksPerFile)
        return fail_msg("peer granted " + std::to_string(resends_) + " blocks again; a file has at most " +
                            std::to_string(kMaxResentBlocksPerFile) + " resent blocks",
                        -EPROTO);
    if (++again_[g.offset] >= kMaxBlockAttempts)
        return fail_msg("peer granted " + range() + " " + std::to_string(again_[g.offset] + 1) +
                            " times; a block is sent at most " + std::to_string(kMaxBlockAttempts) + " times",
                        -EPROTO);
    return {};
}

}  // namespace rftp::middleware::rdma
