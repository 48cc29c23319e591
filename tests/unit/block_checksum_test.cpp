// CRC32C per block (middleware/integrity/block_checksum.h): the standard
// check value, any split of a buffer gives the same answer as the whole,
// a single flipped bit anywhere is seen, and the trailer's byte order.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "middleware/integrity/block_checksum.h"

using rftp::middleware::block_trailer;
using rftp::middleware::Crc32cRunning;
using rftp::middleware::crc32c;
using rftp::middleware::put_block_trailer;

namespace {

std::span<const uint8_t> bytes_of(const char *s) { return {reinterpret_cast<const uint8_t *>(s), std::strlen(s)}; }

TEST(BlockChecksum, MatchesTheStandardCheckValue) {
    EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);  // RFC 3720, B.4
    EXPECT_EQ(crc32c({}), 0u);
    std::vector<uint8_t> zeros(32, 0);
    EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);  // RFC 3720, B.4: 32 bytes of zeros
}

TEST(BlockChecksum, EveryFlippedBitIsSeen) {
    std::vector<uint8_t> block(4097);
    std::mt19937 rng(1);
    for (auto &b : block) b = static_cast<uint8_t>(rng());
    uint32_t good = crc32c(block);
    for (std::size_t byte : {std::size_t{0}, std::size_t{1}, std::size_t{2048}, std::size_t{4095}, std::size_t{4096}})
        for (int bit = 0; bit < 8; ++bit) {
            block[byte] ^= static_cast<uint8_t>(1u << bit);
            EXPECT_NE(crc32c(block), good) << "byte " << byte << " bit " << bit;
            block[byte] ^= static_cast<uint8_t>(1u << bit);
        }
    EXPECT_EQ(crc32c(block), good);
}

TEST(BlockChecksum, TrailerIsBigEndianRightAfterTheData) {
    std::vector<uint8_t> block(16 + 4, 0xEE);
    put_block_trailer(block.data(), 16, 0x01020304u);
    EXPECT_EQ(block[15], 0xEE);
    EXPECT_EQ(block[16], 0x01);
    EXPECT_EQ(block[19], 0x04);
    EXPECT_EQ(block_trailer(block.data(), 16), 0x01020304u);
}

}  // namespace

TEST(Crc32cRunning, PiecesOfAnySizeGiveTheWholeBlocksChecksum) {
    std::vector<uint8_t> block(1 << 20);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<uint8_t>(i * 131 + (i >> 9));
    for (std::size_t piece : {std::size_t{1} << 18, std::size_t{4093}, block.size()}) {
        Crc32cRunning crc;
        for (std::size_t at = 0; at < block.size(); at += piece)
            crc.add({block.data() + at, std::min(piece, block.size() - at)});
        EXPECT_EQ(crc.value(), crc32c(block)) << "pieces of " << piece;
    }
    EXPECT_EQ(Crc32cRunning{}.value(), crc32c({}));
}
