#include "client/transfer/path_streams.h"

#include <gtest/gtest.h>

using rftp::client::kMostStreamsForPath;
using rftp::client::streams_for_path;

namespace {
constexpr uint64_t kDefaultWindow = 3u << 20;  // half of Linux's default tcp_rmem ceiling
}

TEST(PathStreams, AShortPathTakesOneStream) {
    EXPECT_EQ(streams_for_path(0, kDefaultWindow, 16), 1u);      // round trip unknown
    EXPECT_EQ(streams_for_path(50, kDefaultWindow, 16), 1u);     // loopback
    EXPECT_EQ(streams_for_path(2000, kDefaultWindow, 16), 1u);   // a campus
}

TEST(PathStreams, ALongerPathTakesWindowsThatCoverItsRoundTrip) {
    // 10 ms at 10 Gb/s holds 12.5 MB: four windows of 3 MiB.
    EXPECT_EQ(streams_for_path(10'000, kDefaultWindow, 16), 4u);
    // A raised ceiling (tcp_rmem 64 MiB) needs fewer.
    EXPECT_EQ(streams_for_path(10'000, 32u << 20, 16), 1u);
    EXPECT_EQ(streams_for_path(50'000, 32u << 20, 16), 2u);
    // With the default ceilings: eight at 20 ms, sixteen (the bound) at 50 ms.
    EXPECT_EQ(streams_for_path(20'000, kDefaultWindow, 64), 8u);
    EXPECT_EQ(streams_for_path(50'000, kDefaultWindow, 64), 16u);
}

TEST(PathStreams, NeverMoreThanItsBoundOrTheServersLimit) {
    EXPECT_EQ(streams_for_path(50'000, kDefaultWindow, 16), kMostStreamsForPath);
    EXPECT_EQ(streams_for_path(50'000, kDefaultWindow, 4), 4u);
    EXPECT_EQ(streams_for_path(50'000, kDefaultWindow, 0), kMostStreamsForPath);  // no limit said
    EXPECT_EQ(streams_for_path(50'000, 0, 16), kMostStreamsForPath);             // no window: no division by it
}
