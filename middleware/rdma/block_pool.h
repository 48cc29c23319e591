// The channel's registered block pool as its parts see it: the address of
// each block (its data, then room for the checksum trailer), which blocks
// hold nothing but zeros, so /dev/zero need not be read into them again,
// and where a block's trailer may still match its bytes.
// The pool belongs to one file at a time: the channel's gate hands it from
// the source pipeline to the sink pipeline and back, only between files, so
// it needs no lock of its own.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/channel_resources.h"

namespace rftp::middleware::rdma {

class BlockPool {
public:
    explicit BlockPool(const ChannelResources &res)
        : res_(res), zeroed_(res.params.blocks, 0), trailer_at_(res.params.blocks, 0) {}

    uint8_t *block(uint32_t i) const { return res_.block(i); }
    uint32_t count() const { return res_.params.blocks; }
    uint32_t block_size() const { return res_.params.block_size; }

    // Every block, for the disk engines to register.
    std::vector<iovec> buffers() const {
        std::vector<iovec> v(count());
        for (uint32_t i = 0; i < count(); ++i) v[i] = {block(i), res_.params.block_stride()};
        return v;
    }

    bool zeroed(uint32_t i) const { return zeroed_[i] != 0; }
    void set_zeroed(uint32_t i, bool zeros) { zeroed_[i] = zeros ? 1 : 0; }
    // The peer writes into every block from here on.
    void forget_zeros() { std::fill(zeroed_.begin(), zeroed_.end(), 0); }

    // Block i got a trailer that matches its first len bytes: sealed here,
    // or written by the peer with its block.
    void trailer_sealed(uint32_t i, uint32_t len) { trailer_at_[i] = len; }
    // Before block i is lent to the peer: its trailer that may match is
    // inverted, so a notice without a fresh WRITE fails its check instead of
    // passing the old bytes off as new. Once only: inverted twice, it would
    // match again.
    void spoil_trailer(uint32_t i) {
        const uint32_t len = std::exchange(trailer_at_[i], 0);
        if (len == 0) return;
        put_block_trailer(block(i), len, ~block_trailer(block(i), len));
        if (len < block_size()) zeroed_[i] = 0;  // it landed inside the block's data
    }
    // Block i's trailer was made to fail (it holds ~crc of its bytes).
    void trailer_spoiled(uint32_t i) { trailer_at_[i] = 0; }

private:
    const ChannelResources &res_;
    std::vector<uint8_t> zeroed_;
    std::vector<uint32_t> trailer_at_;  // per block: the length whose trailer may match; 0 none
};

}  // namespace rftp::middleware::rdma
