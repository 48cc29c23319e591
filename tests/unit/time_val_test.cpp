#include "protocol/time_val.h"

#include <gtest/gtest.h>

using namespace rftp::ftp;

TEST(TimeVal, WholeSecondsAndFractions) {
    auto t = parse_time_val("20231114221320");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->seconds, 1700000000);
    EXPECT_EQ(t->nanos, 0u);
    t = parse_time_val("20231114221320.5");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->nanos, 500000000u);
    t = parse_time_val("20231114221320.123456789");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->nanos, 123456789u);
}

TEST(TimeVal, LeapDaysAndLeapSeconds) {
    EXPECT_TRUE(parse_time_val("20240229000000"));
    EXPECT_FALSE(parse_time_val("20230229000000"));
    EXPECT_FALSE(parse_time_val("19000229000000"));
    auto leap = parse_time_val("20161231235960");
    ASSERT_TRUE(leap);
    EXPECT_EQ(leap->seconds, parse_time_val("20161231235959")->seconds);
}

TEST(TimeVal, RejectsWhatIsNotOne) {
    for (const char *bad : {"", "2023111422132", "20231314221320", "20231100221320", "20231114241320",
                            "20231114226020", "20231114221361", "2023111422132a", "20231114221320.",
                            "20231114221320.1234567890", "20231114221320 x", "19691231235959", "-2023111422132"})
        EXPECT_FALSE(parse_time_val(bad)) << bad;
}

TEST(TimeVal, FormatsWholeSeconds) {
    EXPECT_EQ(format_time_val(1700000000), "20231114221320");
    EXPECT_EQ(format_time_val(0), "19700101000000");
    EXPECT_EQ(parse_time_val(format_time_val(1234567890))->seconds, 1234567890);
}
