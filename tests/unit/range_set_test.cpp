#include <gtest/gtest.h>

#include "middleware/range_set.h"

using rftp::middleware::RangeSet;

TEST(RangeSet, OutOfOrderBlocksMergeIntoAPrefix) {
    RangeSet r(100);
    EXPECT_TRUE(r.add(300, 100));
    EXPECT_EQ(r.contiguous_end(), 100u);
    EXPECT_TRUE(r.add(100, 100));
    EXPECT_EQ(r.contiguous_end(), 200u);
    EXPECT_FALSE(r.covers_exactly(400));
    EXPECT_TRUE(r.add(200, 100));
    EXPECT_EQ(r.contiguous_end(), 400u);
    EXPECT_TRUE(r.covers_exactly(400));
    EXPECT_FALSE(r.covers_exactly(500));
}

TEST(RangeSet, RejectsOverlapAndBlocksBeforeStart) {
    RangeSet r(0);
    EXPECT_TRUE(r.add(0, 10));
    EXPECT_FALSE(r.add(5, 10));
    EXPECT_FALSE(r.add(0, 1));
    RangeSet s(50);
    EXPECT_FALSE(s.add(0, 10));
    EXPECT_TRUE(s.covers_exactly(50));
}
