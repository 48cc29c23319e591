// The in-transfer digest: blocks offered in any order give the same SHA-256
// as the whole file read in order; blocks sent again are not hashed twice;
// only one claim at a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "middleware/integrity/ordered_digest.h"
#include "middleware/integrity/sha256.h"

using namespace rftp::middleware;

namespace {

std::string whole(const std::vector<uint8_t> &data) {
    Sha256 s;
    s.update(data.data(), data.size());
    return s.hex();
}

TEST(OrderedDigest, AnyArrivalOrderGivesTheFilesDigest) {
    std::vector<uint8_t> file(10 * 1000 + 7);
    std::mt19937 rng(5);
    for (auto &b : file) b = static_cast<uint8_t>(rng());
    std::vector<OrderedDigest::Piece> pieces;
    for (uint64_t at = 0; at < file.size(); at += 1000)
        pieces.push_back({static_cast<uint32_t>(pieces.size()), at,
                          static_cast<uint32_t>(std::min<uint64_t>(1000, file.size() - at))});
    std::shuffle(pieces.begin(), pieces.end(), rng);
    OrderedDigest d;
    unsigned kept_at_most = 0, held = 0;
    for (const auto &p : pieces) {
        ASSERT_TRUE(d.add(p));
        ++held;
        kept_at_most = std::max(kept_at_most, held);
        auto claimed = d.claim();
        for (const auto &c : claimed) d.update(file.data() + c.offset, c.length);
        d.release(claimed);
        held -= static_cast<unsigned>(claimed.size());
    }
    EXPECT_EQ(held, 0u);
    EXPECT_EQ(d.hashed(), file.size());
    EXPECT_EQ(d.finish(file.size()), whole(file));
}

TEST(OrderedDigest, ABlockSentAgainIsNotHashedTwice) {
    OrderedDigest d;
    ASSERT_TRUE(d.add({0, 0, 4}));
    auto c = d.claim();
    ASSERT_EQ(c.size(), 1u);
    const uint8_t abcd[] = {'a', 'b', 'c', 'd'};
    d.update(abcd, 4);
    d.release(c);
    EXPECT_FALSE(d.add({1, 0, 4}));  // the same range again: the owner frees it at once
    EXPECT_EQ(d.finish(4), whole({'a', 'b', 'c', 'd'}));
}

TEST(OrderedDigest, OneClaimAtATimeAndNothingBeforeItsTurn) {
    OrderedDigest d;
    ASSERT_TRUE(d.add({1, 10, 10}));
    EXPECT_TRUE(d.claim().empty());  // bytes [0, 10) have not come
    ASSERT_TRUE(d.add({0, 0, 10}));
    auto first = d.claim();
    ASSERT_EQ(first.size(), 2u);  // both, in order
    EXPECT_EQ(first[0].offset, 0u);
    EXPECT_EQ(first[1].offset, 10u);
    ASSERT_TRUE(d.add({2, 20, 5}));
    EXPECT_TRUE(d.claim().empty());  // the first claim is still being hashed
    EXPECT_FALSE(d.finish(25));
    d.release(first);
    EXPECT_EQ(d.claim().size(), 1u);
}

TEST(OrderedDigest, AnEmptyFileHasTheEmptyDigest) {
    OrderedDigest d;
    EXPECT_EQ(d.finish(0), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    OrderedDigest e;
    EXPECT_FALSE(e.finish(1));
}

}  // namespace

namespace {

// Framed TCP sends a damaged block again after giving its first copy to the
// digest; if that copy is being hashed right then, the second one is in
// already and must not wait for a turn that has passed.
TEST(OrderedDigest, ABlockSentAgainWhileItsFirstCopyIsHashedIsRefused) {
    OrderedDigest d;
    ASSERT_TRUE(d.add({0, 0, 100}));
    ASSERT_TRUE(d.add({1, 100, 100}));
    auto claimed = d.claim();
    ASSERT_EQ(claimed.size(), 2u);
    EXPECT_FALSE(d.add({2, 100, 100}));  // its first copy is in the claim
    EXPECT_TRUE(d.add({3, 200, 100}));   // the next one waits its turn
    std::vector<uint8_t> bytes(300, 7);
    for (const auto &p : claimed) d.update(bytes.data() + p.offset, p.length);
    d.release(claimed);
    auto next = d.claim();
    ASSERT_EQ(next.size(), 1u);
    EXPECT_EQ(next[0].block, 3u);
    d.update(bytes.data() + 200, 100);
    d.release(next);
    EXPECT_EQ(d.finish(300), whole(bytes));
}

}  // namespace
