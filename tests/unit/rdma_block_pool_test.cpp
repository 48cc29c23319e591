// The pool's record of where a block's trailer may still match its bytes
// (block_pool.h): spoiling inverts that trailer once, and never back.
#include "middleware/rdma/block_pool.h"

#include <gtest/gtest.h>

#include <cstring>

#include "middleware/integrity/block_checksum.h"

using rftp::middleware::block_trailer;
using rftp::middleware::crc32c;
using rftp::middleware::put_block_trailer;
using rftp::middleware::rdma::BlockPool;
using rftp::middleware::rdma::ChannelParams;
using rftp::middleware::rdma::ChannelResources;

namespace {

ChannelResources small_pool() {
    ChannelParams p;
    p.block_size = 64 << 10;
    p.blocks = 2;
    auto res = ChannelResources::allocate(p);
    EXPECT_TRUE(res) << res.error().message;
    return std::move(*res);
}

// Fills block i with len bytes and their matching trailer, as a sealed
// block or a peer's WRITE leaves it.
void seal(BlockPool &pool, uint32_t i, uint32_t len) {
    std::memset(pool.block(i), 0x5a, len);
    put_block_trailer(pool.block(i), len, crc32c({pool.block(i), len}));
    pool.trailer_sealed(i, len);
}

bool matches(const BlockPool &pool, uint32_t i, uint32_t len) {
    return block_trailer(pool.block(i), len) == crc32c({pool.block(i), len});
}

}  // namespace

TEST(RdmaBlockPool, SpoilingMakesTheTrailerThatMatchedFail) {
    ChannelResources res = small_pool();
    BlockPool pool(res);
    seal(pool, 0, 1000);
    ASSERT_TRUE(matches(pool, 0, 1000));
    pool.spoil_trailer(0);
    EXPECT_FALSE(matches(pool, 0, 1000));
}

TEST(RdmaBlockPool, SpoilingTwiceNeverMakesItMatchAgain) {
    // A block sent (sealed here), then lent twice without a WRITE between
    // (a grant ahead past the file's end, then the next file's grant).
    ChannelResources res = small_pool();
    BlockPool pool(res);
    seal(pool, 1, 4096);
    pool.spoil_trailer(1);
    pool.spoil_trailer(1);
    EXPECT_FALSE(matches(pool, 1, 4096));
}

TEST(RdmaBlockPool, ASpoiledTrailerInsideZerosEndsTheirRecord) {
    ChannelResources res = small_pool();
    BlockPool pool(res);
    std::memset(pool.block(0), 0, pool.block_size());
    pool.set_zeroed(0, true);
    put_block_trailer(pool.block(0), 100, crc32c({pool.block(0), 100}));
    pool.trailer_sealed(0, 100);
    pool.spoil_trailer(0);
    EXPECT_FALSE(pool.zeroed(0));
}
