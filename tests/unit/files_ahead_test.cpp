#include "client/commands/files_ahead.h"

#include <gtest/gtest.h>

using rftp::client::kLeastFilesAhead;
using rftp::client::kMostFilesAhead;
using rftp::client::unechoed_window;

TEST(FilesAhead, AShortPathKeepsTheLeastWindow) {
    EXPECT_EQ(unechoed_window(0), kLeastFilesAhead);      // round trip unknown
    EXPECT_EQ(unechoed_window(60), kLeastFilesAhead);     // loopback
    EXPECT_EQ(unechoed_window(4'999), kLeastFilesAhead);  // a campus
}

TEST(FilesAhead, TheWindowGrowsWithTheRoundTrip) {
    EXPECT_EQ(unechoed_window(10'000), 10u);  // one file per millisecond of it
    EXPECT_EQ(unechoed_window(12'700), 12u);
}

TEST(FilesAhead, NeverMoreThanHalfOfWhatRftpdQueues) {
    EXPECT_EQ(unechoed_window(16'000), kMostFilesAhead);
    EXPECT_EQ(unechoed_window(50'000), kMostFilesAhead);
    EXPECT_EQ(unechoed_window(UINT32_MAX), kMostFilesAhead);
    // Two lines a file (SIZE, RETR); rftpd closes a session with more than 64 waiting.
    EXPECT_LE(2 * kMostFilesAhead, 32u);
}
