#include "client/commands/files_ahead.h"

#include <gtest/gtest.h>

using rftp::client::kLeastFilesAhead;
using rftp::client::kMostFilesAhead;
using rftp::client::unechoed_window;

namespace {
constexpr unsigned kRftpdPipeline = 256;  // FEAT's PIPELINE from rftpd
}

TEST(FilesAhead, AShortPathKeepsTheLeastWindow) {
    EXPECT_EQ(unechoed_window(0, kRftpdPipeline), kLeastFilesAhead);      // round trip unknown
    EXPECT_EQ(unechoed_window(60, kRftpdPipeline), kLeastFilesAhead);     // loopback
    EXPECT_EQ(unechoed_window(4'999, kRftpdPipeline), kLeastFilesAhead);  // a campus
}

TEST(FilesAhead, TheWindowGrowsWithTheRoundTrip) {
    EXPECT_EQ(unechoed_window(10'000, kRftpdPipeline), 10u);  // one file per millisecond of it
    EXPECT_EQ(unechoed_window(12'700, kRftpdPipeline), 12u);
    EXPECT_EQ(unechoed_window(50'000, kRftpdPipeline), 50u);
}

TEST(FilesAhead, NeverMoreThanHalfOfWhatTheServerLetsWait) {
    EXPECT_EQ(unechoed_window(64'000, kRftpdPipeline), kMostFilesAhead);
    EXPECT_EQ(unechoed_window(UINT32_MAX, kRftpdPipeline), kMostFilesAhead);
    // Two lines a file (SIZE, RETR): half of rftpd's 256.
    EXPECT_LE(2 * kMostFilesAhead, kRftpdPipeline / 2);
    // A server that says less keeps it smaller; one that says nothing is
    // taken to let 64 wait.
    EXPECT_EQ(unechoed_window(50'000, 100), 25u);
    EXPECT_EQ(unechoed_window(50'000, 0), 16u);
    // Within what it says, however little.
    EXPECT_EQ(unechoed_window(50'000, 8), 2u);
    EXPECT_EQ(unechoed_window(50'000, 1), 1u);
}
