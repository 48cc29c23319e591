// Per-block CRC32C (Castagnoli, as iSCSI and ext4 use), through ISA-L, which
// picks the fastest kernel the CPU has (SSE4.2 crc32 or carry-less multiply).
// The source computes it as the block is loaded; the sink checks it before
// the block is written, so a block damaged anywhere on the way (a NIC, a
// bus, memory) is sent again rather than stored.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace rftp::middleware {

// CRC32C of bytes, standard form: crc32c("123456789") == 0xE3069283.
uint32_t crc32c(std::span<const uint8_t> bytes);

// The same CRC32C built up piece by piece, for a block checksummed while it
// is sent: each piece is then still in the CPU's cache when it is copied.
class Crc32cRunning {
public:
    void add(std::span<const uint8_t> bytes);
    uint32_t value() const { return ~state_; }

private:
    uint32_t state_ = 0xFFFFFFFFu;
};

// A block whose checksum fails is sent again, on RDMA and on parallel TCP
// streams alike; this many failures of one block fail the file: the path
// between the hosts is damaging data, and retrying cannot fix that.
inline constexpr unsigned kMaxBlockAttempts = 4;
// Over RDMA, more damaged blocks than this in one file fail it too: each one
// is remembered until the file ends, and a source accepts no more resends,
// so a peer cannot make either side keep a record per block of the file.
inline constexpr unsigned kMaxResentBlocksPerFile = 1024;

// The checksum travels as 4 bytes right after the block's data (big-endian).
constexpr std::size_t kBlockTrailerBytes = 4;
void put_block_trailer(uint8_t *block, uint32_t length, uint32_t crc);
uint32_t block_trailer(const uint8_t *block, uint32_t length);

// What a block's trailer carries: its data's CRC32C, or zero where both
// ends agreed to go without (OPTS BLOCKSUM NONE).
inline uint32_t trailer_crc(std::span<const uint8_t> data, bool checksums) { return checksums ? crc32c(data) : 0; }

// A received block against its trailer; always intact without checksums.
struct TrailerCheck {
    bool intact = true;
    uint32_t got = 0, want = 0;
};
inline TrailerCheck check_block_trailer(const uint8_t *block, uint32_t length, bool checksums) {
    if (!checksums) return {};
    uint32_t want = block_trailer(block, length), got = crc32c({block, length});
    return {got == want, got, want};
}

// Test-only fault switch: RFTP_TEST_FLIP_BLOCKS=N in a sender's environment
// flips one bit in each of the next N blocks it sends, after their checksum
// was computed, so the tests can show every one is caught; "N/K" lets K
// blocks pass after each damaged one. Returns whether this block is to be
// damaged (and counts it). Off unless set.
bool take_fault_flip();
// Whether the switch is set at all (shortcuts that would bypass it stay off).
bool fault_flips_armed();

}  // namespace rftp::middleware
