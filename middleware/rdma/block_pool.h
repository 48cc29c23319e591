// The channel's registered block pool as its parts see it: the address of
// each block (its data, then room for the checksum trailer) and which blocks
// hold nothing but zeros, so /dev/zero need not be read into them again.
// The pool belongs to one file at a time: the channel's gate hands it from
// the source pipeline to the sink pipeline and back, only between files, so
// it needs no lock of its own.
#pragma once

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "middleware/rdma/channel_resources.h"

namespace rftp::middleware::rdma {

class BlockPool {
public:
    explicit BlockPool(const ChannelResources &res) : res_(res), zeroed_(res.params.blocks, 0) {}

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

private:
    const ChannelResources &res_;
    std::vector<uint8_t> zeroed_;
};

}  // namespace rftp::middleware::rdma
