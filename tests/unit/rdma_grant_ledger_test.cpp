// What an RDMA source accepts from its sink's grants
// (middleware/rdma/grant_ledger.h): each grant one block of the file, in the
// sink's own order, and one range granted again at most as often as the
// sink resends a damaged block.
#include <gtest/gtest.h>

#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/grant_ledger.h"

using rftp::middleware::kMaxBlockAttempts;
using rftp::middleware::kMaxResentBlocksPerFile;
using rftp::middleware::rdma::GrantLedger;
namespace wire = rftp::wire;

namespace {

wire::Grant grant(uint64_t offset, uint32_t length) {
    wire::Grant g{};
    g.offset = offset;
    g.length = length;
    return g;
}

TEST(GrantLedger, TheSinksGrantsForAWholeFileAreAccepted) {
    GrantLedger ledger(0, 10'000, 4096);
    EXPECT_TRUE(ledger.accept(grant(0, 4096)));
    EXPECT_TRUE(ledger.accept(grant(4096, 4096)));
    EXPECT_TRUE(ledger.accept(grant(8192, 10'000 - 8192)));
}

TEST(GrantLedger, AResumedFileCountsItsBlocksFromItsStart) {
    GrantLedger ledger(1000, 9192, 4096);
    EXPECT_TRUE(ledger.accept(grant(1000, 4096)));
    EXPECT_TRUE(ledger.accept(grant(5096, 4096)));
    EXPECT_FALSE(ledger.accept(grant(4096, 4096)));  // a block of the whole file, not of this transfer
}

TEST(GrantLedger, ARangeThatIsNotABlockOfTheFileIsRefused) {
    GrantLedger ledger(0, 10'000, 4096);
    struct Case {
        uint64_t offset;
        uint32_t length;
    } refused[] = {
        {0, 0},            // no bytes at all
        {0, 1},            // shorter than its block
        {0, 4097},         // longer than a block
        {100, 4096},       // not on a block's start
        {8192, 4096},      // the last block runs past the end
        {10'000, 0},       // at the end: nothing is left to grant
        {12'288, 4096},    // past the end
        {UINT64_MAX - 4095, 4096},
    };
    for (const auto &c : refused) {
        auto ok = ledger.accept(grant(c.offset, c.length));
        ASSERT_FALSE(ok) << c.offset << "+" << c.length;
        EXPECT_EQ(ok.error().code, -EPROTO);
        EXPECT_NE(ok.error().message.find("peer granted bytes " + std::to_string(c.offset)), std::string::npos)
            << ok.error().message;
    }
}

TEST(GrantLedger, AnEmptyFileTakesNoGrant) {
    GrantLedger ledger(0, 0, 4096);
    EXPECT_FALSE(ledger.accept(grant(0, 0)));
}

TEST(GrantLedger, ARangeIsGrantedAgainAsOftenAsTheSinkResendsAndNoMore) {
    GrantLedger ledger(0, 1 << 20, 4096);
    ASSERT_TRUE(ledger.accept(grant(0, 4096)));
    ASSERT_TRUE(ledger.accept(grant(4096, 4096)));
    for (unsigned again = 1; again < kMaxBlockAttempts; ++again)
        EXPECT_TRUE(ledger.accept(grant(0, 4096))) << "resend " << again;
    auto refused = ledger.accept(grant(0, 4096));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find(std::to_string(kMaxBlockAttempts + 1) + " times"), std::string::npos)
        << refused.error().message;
    // Each range has its own count.
    EXPECT_TRUE(ledger.accept(grant(4096, 4096)));
    EXPECT_TRUE(ledger.accept(grant(8192, 4096)));
}

TEST(GrantLedger, AFileHasABoundedNumberOfResentBlocks) {
    // Every block of a large file granted again: each within its own count,
    // but together past what a working link ever needs.
    const uint32_t block = 4096;
    const uint64_t blocks = kMaxResentBlocksPerFile + 8;
    GrantLedger ledger(0, blocks * block, block);
    for (uint64_t i = 0; i < blocks; ++i) ASSERT_TRUE(ledger.accept(grant(i * block, block)));
    for (uint64_t i = 0; i < kMaxResentBlocksPerFile; ++i)
        ASSERT_TRUE(ledger.accept(grant(i * block, block))) << "resend " << i;
    auto refused = ledger.accept(grant(kMaxResentBlocksPerFile * block, block));
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("at most " + std::to_string(kMaxResentBlocksPerFile) + " resent blocks"),
              std::string::npos)
        << refused.error().message;
}

}  // namespace
