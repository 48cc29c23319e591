// The block state machine of a registered pool (middleware/rdma/block_states.h):
// the legal paths, every refused move (with a message naming the block and the
// states), take_free's bookkeeping, and that a refused move changes nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "middleware/rdma/block_states.h"

using rftp::middleware::rdma::BlockStates;
using rftp::middleware::rdma::SinkBlock;
using rftp::middleware::rdma::SourceBlock;
namespace rdma = rftp::middleware::rdma;

namespace {

constexpr SourceBlock kSourceStates[] = {SourceBlock::free, SourceBlock::loading, SourceBlock::ready,
                                         SourceBlock::posted, SourceBlock::zeros};
constexpr SinkBlock kSinkStates[] = {SinkBlock::free, SinkBlock::lending, SinkBlock::granted, SinkBlock::filled,
                                     SinkBlock::writing};

// The legal moves, written out independently of allowed().
bool source_legal(SourceBlock from, SourceBlock to) {
    using S = SourceBlock;
    return (from == S::free && to == S::loading) || (from == S::loading && to == S::ready) ||
           (from == S::ready && to == S::posted) || (from == S::posted && to == S::free) ||
           (from == S::loading && to == S::free) || (from == S::free && to == S::zeros);
}
bool sink_legal(SinkBlock from, SinkBlock to) {
    using S = SinkBlock;
    return (from == S::free && to == S::lending) || (from == S::lending && to == S::granted) ||
           (from == S::granted && to == S::filled) || (from == S::filled && to == S::writing) ||
           (from == S::writing && to == S::free) || (from == S::writing && to == S::lending) ||
           (from == S::granted && to == S::free);  // granted ahead, past the file's end
}

// A free block taken and its grant sent: the state in which notices are taken.
std::optional<uint32_t> take_granted(BlockStates<SinkBlock> &b) {
    auto i = b.take_free(SinkBlock::lending);
    if (i) {
        EXPECT_TRUE(b.move(*i, SinkBlock::lending, SinkBlock::granted));
    }
    return i;
}

// Brings a fresh block of `b` into state `s` along the legal path; returns its index.
uint32_t block_in(BlockStates<SourceBlock> &b, SourceBlock s) {
    if (s == SourceBlock::zeros) {
        auto z = b.take_free(SourceBlock::zeros);
        EXPECT_TRUE(z);
        return z.value_or(0);
    }
    auto i = b.take_free(SourceBlock::loading);
    EXPECT_TRUE(i);
    if (s == SourceBlock::free) {
        EXPECT_TRUE(b.move(*i, SourceBlock::loading, SourceBlock::free));
        return *i;
    }
    if (s == SourceBlock::loading) return *i;
    EXPECT_TRUE(b.move(*i, SourceBlock::loading, SourceBlock::ready));
    if (s == SourceBlock::ready) return *i;
    EXPECT_TRUE(b.move(*i, SourceBlock::ready, SourceBlock::posted));
    return *i;
}
uint32_t block_in(BlockStates<SinkBlock> &b, SinkBlock s) {
    auto i = b.take_free(SinkBlock::lending);
    EXPECT_TRUE(i);
    if (s == SinkBlock::lending) return *i;
    EXPECT_TRUE(b.move(*i, SinkBlock::lending, SinkBlock::granted));
    if (s == SinkBlock::free) {
        EXPECT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
        EXPECT_TRUE(b.move(*i, SinkBlock::filled, SinkBlock::writing));
        EXPECT_TRUE(b.move(*i, SinkBlock::writing, SinkBlock::free));
        return *i;
    }
    if (s == SinkBlock::granted) return *i;
    EXPECT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
    if (s == SinkBlock::filled) return *i;
    EXPECT_TRUE(b.move(*i, SinkBlock::filled, SinkBlock::writing));
    return *i;
}

template <class State>
std::vector<State> snapshot(const BlockStates<State> &b) {
    std::vector<State> v;
    for (std::size_t i = 0; i < b.size(); ++i) v.push_back(b.at(i));
    return v;
}

bool contains(const std::string &s, const std::string &needle) { return s.find(needle) != std::string::npos; }

}  // namespace

// ---- the transition tables ----------------------------------------------------------

TEST(RdmaBlockStatesTable, AllowedMatchesTheDocumentedMoves) {
    for (SourceBlock from : kSourceStates)
        for (SourceBlock to : kSourceStates)
            EXPECT_EQ(rdma::allowed(from, to), source_legal(from, to))
                << rdma::to_string(from) << " -> " << rdma::to_string(to);
    for (SinkBlock from : kSinkStates)
        for (SinkBlock to : kSinkStates)
            EXPECT_EQ(rdma::allowed(from, to), sink_legal(from, to))
                << rdma::to_string(from) << " -> " << rdma::to_string(to);
    static_assert(rdma::allowed(SinkBlock::granted, SinkBlock::filled));
    static_assert(!rdma::allowed(SinkBlock::filled, SinkBlock::filled));
}

TEST(RdmaBlockStatesTable, StateNames) {
    EXPECT_STREQ(rdma::to_string(SourceBlock::free), "free");
    EXPECT_STREQ(rdma::to_string(SourceBlock::loading), "loading");
    EXPECT_STREQ(rdma::to_string(SourceBlock::ready), "ready");
    EXPECT_STREQ(rdma::to_string(SourceBlock::posted), "posted");
    EXPECT_STREQ(rdma::to_string(SourceBlock::zeros), "zeros");
    EXPECT_STREQ(rdma::to_string(SinkBlock::free), "free");
    EXPECT_STREQ(rdma::to_string(SinkBlock::lending), "lending");
    EXPECT_STREQ(rdma::to_string(SinkBlock::granted), "granted");
    EXPECT_STREQ(rdma::to_string(SinkBlock::filled), "filled");
    EXPECT_STREQ(rdma::to_string(SinkBlock::writing), "writing");
}

// ---- legal paths ---------------------------------------------------------------------

TEST(RdmaBlockStatesSource, LegalPathFreeLoadingReadyPostedFree) {
    BlockStates<SourceBlock> b(4);
    EXPECT_EQ(b.size(), 4u);
    EXPECT_TRUE(b.all_free());
    auto i = b.take_free(SourceBlock::loading);
    ASSERT_TRUE(i);
    EXPECT_EQ(b.at(*i), SourceBlock::loading);
    EXPECT_EQ(b.free_count(), 3u);
    EXPECT_FALSE(b.all_free());
    ASSERT_TRUE(b.move(*i, SourceBlock::loading, SourceBlock::ready));
    EXPECT_EQ(b.at(*i), SourceBlock::ready);
    ASSERT_TRUE(b.move(*i, SourceBlock::ready, SourceBlock::posted));
    EXPECT_EQ(b.at(*i), SourceBlock::posted);
    EXPECT_EQ(b.free_count(), 3u);
    ASSERT_TRUE(b.move(*i, SourceBlock::posted, SourceBlock::free));
    EXPECT_EQ(b.at(*i), SourceBlock::free);
    EXPECT_EQ(b.free_count(), 4u);
    EXPECT_TRUE(b.all_free());
}

// A /dev/zero file holds one block of zeros for its whole length: no move
// takes it anywhere, and it is never handed out again while held.
TEST(RdmaBlockStatesSource, TheZeroBlockIsHeldForTheFile) {
    BlockStates<SourceBlock> b(3);
    auto z = b.take_free(SourceBlock::zeros);
    ASSERT_TRUE(z);
    EXPECT_EQ(b.at(*z), SourceBlock::zeros);
    EXPECT_EQ(b.free_count(), 2u);
    for (SourceBlock to : kSourceStates) EXPECT_FALSE(b.move(*z, SourceBlock::zeros, to)) << rdma::to_string(to);
    std::set<uint32_t> others;
    while (auto i = b.take_free(SourceBlock::loading)) others.insert(*i);
    EXPECT_EQ(others.size(), 2u);
    EXPECT_FALSE(others.count(*z));
    EXPECT_EQ(b.at(*z), SourceBlock::zeros);
}

TEST(RdmaBlockStatesSource, FailedLoadGoesBackFree) {
    BlockStates<SourceBlock> b(2);
    auto i = b.take_free(SourceBlock::loading);
    ASSERT_TRUE(i);
    ASSERT_TRUE(b.move(*i, SourceBlock::loading, SourceBlock::free));
    EXPECT_EQ(b.at(*i), SourceBlock::free);
    EXPECT_TRUE(b.all_free());
    // And it can be taken again.
    auto again = b.take_free(SourceBlock::loading);
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, *i);
}

TEST(RdmaBlockStatesSink, LegalPathFreeGrantedFilledWritingFree) {
    BlockStates<SinkBlock> b(3);
    auto i = take_granted(b);
    ASSERT_TRUE(i);
    EXPECT_EQ(b.at(*i), SinkBlock::granted);
    EXPECT_EQ(b.free_count(), 2u);
    ASSERT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
    EXPECT_EQ(b.at(*i), SinkBlock::filled);
    ASSERT_TRUE(b.move(*i, SinkBlock::filled, SinkBlock::writing));
    EXPECT_EQ(b.at(*i), SinkBlock::writing);
    EXPECT_EQ(b.free_count(), 2u);
    ASSERT_TRUE(b.move(*i, SinkBlock::writing, SinkBlock::free));
    EXPECT_EQ(b.at(*i), SinkBlock::free);
    EXPECT_EQ(b.free_count(), 3u);
    EXPECT_TRUE(b.all_free());
}

TEST(RdmaBlockStatesSink, ManyBlocksInterleaved) {
    BlockStates<SinkBlock> b(3);
    auto x = take_granted(b), y = take_granted(b), z = take_granted(b);
    ASSERT_TRUE(x && y && z);
    EXPECT_EQ(b.free_count(), 0u);
    ASSERT_TRUE(b.move(*y, SinkBlock::granted, SinkBlock::filled));
    ASSERT_TRUE(b.move(*z, SinkBlock::granted, SinkBlock::filled));
    ASSERT_TRUE(b.move(*y, SinkBlock::filled, SinkBlock::writing));
    ASSERT_TRUE(b.move(*y, SinkBlock::writing, SinkBlock::free));
    EXPECT_EQ(b.at(*x), SinkBlock::granted);
    EXPECT_EQ(b.at(*y), SinkBlock::free);
    EXPECT_EQ(b.at(*z), SinkBlock::filled);
    EXPECT_EQ(b.free_count(), 1u);
    EXPECT_FALSE(b.all_free());
}

// ---- refused moves -----------------------------------------------------------------------

TEST(RdmaBlockStatesSource, EveryIllegalMoveIsRefused) {
    for (SourceBlock from : kSourceStates) {
        for (SourceBlock to : kSourceStates) {
            // free -> anything goes through take_free, so move() refuses it even where the machine allows it.
            if (from != SourceBlock::free && source_legal(from, to)) continue;
            BlockStates<SourceBlock> b(3);
            uint32_t i = block_in(b, from);
            auto before = snapshot(b);
            std::size_t free_before = b.free_count();
            auto r = b.move(i, from, to);
            ASSERT_FALSE(r) << rdma::to_string(from) << " -> " << rdma::to_string(to) << " was allowed";
            EXPECT_TRUE(contains(r.error().message, rdma::to_string(from))) << r.error().message;
            EXPECT_TRUE(contains(r.error().message, rdma::to_string(to))) << r.error().message;
            EXPECT_EQ(snapshot(b), before);
            EXPECT_EQ(b.free_count(), free_before);
        }
    }
}

TEST(RdmaBlockStatesSink, EveryIllegalMoveIsRefused) {
    for (SinkBlock from : kSinkStates) {
        for (SinkBlock to : kSinkStates) {
            if (from != SinkBlock::free && sink_legal(from, to)) continue;
            BlockStates<SinkBlock> b(3);
            uint32_t i = block_in(b, from);
            auto before = snapshot(b);
            std::size_t free_before = b.free_count();
            auto r = b.move(i, from, to);
            ASSERT_FALSE(r) << rdma::to_string(from) << " -> " << rdma::to_string(to) << " was allowed";
            EXPECT_TRUE(contains(r.error().message, rdma::to_string(from))) << r.error().message;
            EXPECT_TRUE(contains(r.error().message, rdma::to_string(to))) << r.error().message;
            EXPECT_EQ(snapshot(b), before);
            EXPECT_EQ(b.free_count(), free_before);
        }
    }
}

TEST(RdmaBlockStatesSource, LegalMoveFromTheWrongCurrentStateIsRefused) {
    // For every legal move (from, to) and every state the block is really in
    // other than `from`, the move is refused and names the block and both states.
    for (SourceBlock from : kSourceStates) {
        for (SourceBlock to : kSourceStates) {
            if (from == SourceBlock::free || !source_legal(from, to)) continue;
            for (SourceBlock actual : kSourceStates) {
                if (actual == from) continue;
                BlockStates<SourceBlock> b(3);
                uint32_t i = block_in(b, actual);
                auto before = snapshot(b);
                auto r = b.move(i, from, to);
                ASSERT_FALSE(r);
                std::string want = "block " + std::to_string(i) + " is " + rdma::to_string(actual) + ", not " +
                                   rdma::to_string(from);
                EXPECT_TRUE(contains(r.error().message, want)) << r.error().message << " / wanted " << want;
                EXPECT_EQ(snapshot(b), before);
            }
        }
    }
}

TEST(RdmaBlockStatesSink, LegalMoveFromTheWrongCurrentStateIsRefused) {
    for (SinkBlock from : kSinkStates) {
        for (SinkBlock to : kSinkStates) {
            if (from == SinkBlock::free || !sink_legal(from, to)) continue;
            for (SinkBlock actual : kSinkStates) {
                if (actual == from) continue;
                BlockStates<SinkBlock> b(3);
                uint32_t i = block_in(b, actual);
                auto before = snapshot(b);
                auto r = b.move(i, from, to);
                ASSERT_FALSE(r);
                std::string want = "block " + std::to_string(i) + " is " + rdma::to_string(actual) + ", not " +
                                   rdma::to_string(from);
                EXPECT_TRUE(contains(r.error().message, want)) << r.error().message << " / wanted " << want;
                EXPECT_EQ(snapshot(b), before);
            }
        }
    }
}

TEST(RdmaBlockStatesSink, BlockNotifiedTwiceIsRefused) {
    BlockStates<SinkBlock> b(8);
    std::optional<uint32_t> i;
    for (int k = 0; k < 6; ++k) i = take_granted(b);  // block 5
    ASSERT_TRUE(i);
    ASSERT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
    auto r = b.move(*i, SinkBlock::granted, SinkBlock::filled);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "block " + std::to_string(*i) + " is filled, not granted"))
        << r.error().message;
    EXPECT_EQ(b.at(*i), SinkBlock::filled);
    // And once it is being written, a late duplicate notice is refused too.
    ASSERT_TRUE(b.move(*i, SinkBlock::filled, SinkBlock::writing));
    r = b.move(*i, SinkBlock::granted, SinkBlock::filled);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "is writing, not granted")) << r.error().message;
    EXPECT_EQ(b.at(*i), SinkBlock::writing);
}

TEST(RdmaBlockStatesSink, NoticeForAFreeBlockIsRefused) {
    BlockStates<SinkBlock> b(4);
    auto r = b.move(2, SinkBlock::granted, SinkBlock::filled);  // never granted
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "block 2 is free, not granted")) << r.error().message;
    EXPECT_TRUE(b.all_free());
    EXPECT_EQ(b.free_count(), 4u);
    // A block that went all the way round and is free again.
    uint32_t i = block_in(b, SinkBlock::free);
    r = b.move(i, SinkBlock::granted, SinkBlock::filled);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "block " + std::to_string(i) + " is free, not granted"))
        << r.error().message;
    EXPECT_TRUE(b.all_free());
}

TEST(RdmaBlockStatesSink, IndexOutOfRangeIsRefused) {
    BlockStates<SinkBlock> b(4);
    ASSERT_TRUE(take_granted(b));
    auto before = snapshot(b);
    for (uint64_t index : {uint64_t{4}, uint64_t{5}, uint64_t{1} << 32, (uint64_t{1} << 32) + 1, ~uint64_t{0}}) {
        EXPECT_FALSE(b.valid(index));
        auto r = b.move(index, SinkBlock::granted, SinkBlock::filled);
        ASSERT_FALSE(r) << index;
        // The full 64-bit index, not a truncated one (a peer's slot field could alias a real block).
        EXPECT_TRUE(contains(r.error().message, "block " + std::to_string(index) + " does not exist (pool has 4)"))
            << r.error().message;
        EXPECT_EQ(snapshot(b), before);
        EXPECT_EQ(b.free_count(), 3u);
    }
    EXPECT_TRUE(b.valid(3));
}

TEST(RdmaBlockStatesSource, IndexOutOfRangeIsRefused) {
    BlockStates<SourceBlock> b(2);
    auto r = b.move(2, SourceBlock::posted, SourceBlock::free);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "block 2 does not exist (pool has 2)")) << r.error().message;
    EXPECT_EQ(b.free_count(), 2u);  // nothing was pushed onto the free stack
}

// ---- take_free -----------------------------------------------------------------------------

TEST(RdmaBlockStatesTakeFree, ReturnsEveryBlockExactlyOnceThenNothing) {
    constexpr std::size_t n = 64;
    BlockStates<SinkBlock> b(n);
    std::set<uint32_t> seen;
    for (std::size_t k = 0; k < n; ++k) {
        EXPECT_EQ(b.free_count(), n - k);
        auto i = take_granted(b);
        ASSERT_TRUE(i) << k;
        ASSERT_LT(*i, n);
        EXPECT_TRUE(seen.insert(*i).second) << "block " << *i << " handed out twice";
        EXPECT_EQ(b.at(*i), SinkBlock::granted);
    }
    EXPECT_EQ(seen.size(), n);
    EXPECT_EQ(b.free_count(), 0u);
    EXPECT_FALSE(take_granted(b));
    EXPECT_FALSE(take_granted(b));
    EXPECT_EQ(b.free_count(), 0u);
}

TEST(RdmaBlockStatesTakeFree, FreedBlocksComeBackAndNoneIsLost) {
    BlockStates<SourceBlock> b(5);
    std::vector<uint32_t> taken;
    while (auto i = b.take_free(SourceBlock::loading)) taken.push_back(*i);
    ASSERT_EQ(taken.size(), 5u);
    // Give back two, in some order; exactly those two come out again.
    ASSERT_TRUE(b.move(taken[3], SourceBlock::loading, SourceBlock::free));
    ASSERT_TRUE(b.move(taken[1], SourceBlock::loading, SourceBlock::ready));
    ASSERT_TRUE(b.move(taken[1], SourceBlock::ready, SourceBlock::posted));
    ASSERT_TRUE(b.move(taken[1], SourceBlock::posted, SourceBlock::free));
    EXPECT_EQ(b.free_count(), 2u);
    std::set<uint32_t> again;
    while (auto i = b.take_free(SourceBlock::loading)) again.insert(*i);
    EXPECT_EQ(again, (std::set<uint32_t>{taken[1], taken[3]}));
    EXPECT_EQ(b.free_count(), 0u);
}

TEST(RdmaBlockStatesTakeFree, RefusesATargetThatIsNotAMoveFromFree) {
    BlockStates<SourceBlock> s(3);
    EXPECT_FALSE(s.take_free(SourceBlock::ready));
    EXPECT_FALSE(s.take_free(SourceBlock::posted));
    EXPECT_FALSE(s.take_free(SourceBlock::free));
    EXPECT_EQ(s.free_count(), 3u);
    EXPECT_EQ(snapshot(s), std::vector<SourceBlock>(3, SourceBlock::free));
    BlockStates<SinkBlock> k(3);
    EXPECT_FALSE(k.take_free(SinkBlock::filled));
    EXPECT_FALSE(k.take_free(SinkBlock::writing));
    EXPECT_FALSE(k.take_free(SinkBlock::free));
    EXPECT_EQ(k.free_count(), 3u);
    EXPECT_TRUE(k.all_free());
}

TEST(RdmaBlockStatesTakeFree, EmptyPool) {
    BlockStates<SinkBlock> b;
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.free_count(), 0u);
    EXPECT_TRUE(b.all_free());
    EXPECT_FALSE(b.valid(0));
    EXPECT_FALSE(take_granted(b));
    auto r = b.move(0, SinkBlock::granted, SinkBlock::filled);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "block 0 does not exist (pool has 0)")) << r.error().message;
}

// ---- bookkeeping ---------------------------------------------------------------------------

TEST(RdmaBlockStatesBookkeeping, FreeCountAndAllFreeFollowEveryMove) {
    BlockStates<SourceBlock> b(3);
    auto count_free = [&] {
        std::size_t n = 0;
        for (std::size_t i = 0; i < b.size(); ++i) n += b.at(i) == SourceBlock::free;
        return n;
    };
    auto check = [&] {
        EXPECT_EQ(b.free_count(), count_free());
        EXPECT_EQ(b.all_free(), count_free() == b.size());
    };
    check();
    auto x = b.take_free(SourceBlock::loading);
    check();
    auto y = b.take_free(SourceBlock::loading);
    check();
    ASSERT_TRUE(x && y);
    ASSERT_TRUE(b.move(*x, SourceBlock::loading, SourceBlock::ready));
    check();
    ASSERT_TRUE(b.move(*y, SourceBlock::loading, SourceBlock::free));
    check();
    ASSERT_TRUE(b.move(*x, SourceBlock::ready, SourceBlock::posted));
    check();
    EXPECT_FALSE(b.all_free());
    ASSERT_TRUE(b.move(*x, SourceBlock::posted, SourceBlock::free));
    check();
    EXPECT_TRUE(b.all_free());
}

TEST(RdmaBlockStatesBookkeeping, FailedMovesChangeNothing) {
    BlockStates<SinkBlock> b(6);
    uint32_t granted = block_in(b, SinkBlock::granted);
    uint32_t filled = block_in(b, SinkBlock::filled);
    uint32_t writing = block_in(b, SinkBlock::writing);
    auto before = snapshot(b);
    ASSERT_EQ(b.free_count(), 3u);

    // Refusals of every kind, several times over.
    for (int round = 0; round < 3; ++round) {
        EXPECT_FALSE(b.move(granted, SinkBlock::writing, SinkBlock::free));   // wrong current state, to free
        EXPECT_FALSE(b.move(filled, SinkBlock::granted, SinkBlock::filled));  // duplicate notice
        EXPECT_FALSE(b.move(writing, SinkBlock::filled, SinkBlock::free));    // no such move
        EXPECT_FALSE(b.move(writing, SinkBlock::free, SinkBlock::granted));   // free -> is take_free's
        EXPECT_FALSE(b.move(filled, SinkBlock::granted, SinkBlock::free));    // filled, not granted
        EXPECT_FALSE(b.move(granted, SinkBlock::granted, SinkBlock::granted));
        EXPECT_FALSE(b.move(99, SinkBlock::writing, SinkBlock::free));        // out of range
        EXPECT_FALSE(b.take_free(SinkBlock::filled));                         // not a move from free
    }
    EXPECT_EQ(snapshot(b), before);
    EXPECT_EQ(b.free_count(), 3u);

    // The free stack was not disturbed: exactly the three untouched blocks are handed out.
    std::set<uint32_t> rest;
    while (auto i = take_granted(b)) rest.insert(*i);
    EXPECT_EQ(rest.size(), 3u);
    EXPECT_EQ(rest.count(granted) + rest.count(filled) + rest.count(writing), 0u);
}

TEST(SinkBlocks, ABlockGrantedAheadIsTakenByIndexAndMayGoBackUnused) {
    BlockStates<SinkBlock> b(4);
    ASSERT_TRUE(b.take(2, SinkBlock::lending));
    EXPECT_FALSE(b.take(2, SinkBlock::lending));  // taken already
    EXPECT_FALSE(b.take(9, SinkBlock::lending));  // no such block
    EXPECT_FALSE(b.take(1, SinkBlock::filled));   // not a move from free
    ASSERT_TRUE(b.move(2, SinkBlock::lending, SinkBlock::granted));
    EXPECT_EQ(b.free_count(), 3u);
    // The others are handed out as before; block 2 is not among them.
    std::set<uint32_t> rest;
    while (auto i = take_granted(b)) rest.insert(*i);
    EXPECT_EQ(rest, (std::set<uint32_t>{0, 1, 3}));
    // Past the end of the file that came: back to free, unused.
    ASSERT_TRUE(b.move(2, SinkBlock::granted, SinkBlock::free));
    EXPECT_EQ(b.free_count(), 1u);
}

TEST(SinkBlocks, AChecksumFailureLendsTheSameBlockAgain) {
    BlockStates<SinkBlock> b(2);
    auto i = take_granted(b);
    ASSERT_TRUE(i);
    ASSERT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
    ASSERT_TRUE(b.move(*i, SinkBlock::filled, SinkBlock::writing));
    ASSERT_TRUE(b.move(*i, SinkBlock::writing, SinkBlock::lending));
    EXPECT_EQ(b.at(*i), SinkBlock::lending);
    EXPECT_EQ(b.free_count(), 1u);  // it never went back to the free stack
    ASSERT_TRUE(b.move(*i, SinkBlock::lending, SinkBlock::granted));
    ASSERT_TRUE(b.move(*i, SinkBlock::granted, SinkBlock::filled));
}

// A slot is lent before its grant goes out (grants go in batches). A notice
// for it then can only be a guess or a replay of the slot's last notice: its
// memory still holds the last block, which would pass its check.
TEST(SinkBlocks, ANoticeBeforeTheGrantWentOutIsRefused) {
    BlockStates<SinkBlock> b(2);
    uint32_t i = block_in(b, SinkBlock::lending);
    auto r = b.move(i, SinkBlock::granted, SinkBlock::filled);
    ASSERT_FALSE(r);
    EXPECT_TRUE(contains(r.error().message, "is lending, not granted")) << r.error().message;
    EXPECT_FALSE(b.move(i, SinkBlock::lending, SinkBlock::filled));  // no such move either
    ASSERT_TRUE(b.move(i, SinkBlock::lending, SinkBlock::granted));
    EXPECT_TRUE(b.move(i, SinkBlock::granted, SinkBlock::filled));
}
