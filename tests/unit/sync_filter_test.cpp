#include "client/sync/path_filter.h"

#include <gtest/gtest.h>

using namespace rftp::client;

TEST(SyncGlob, StarStopsAtSlashDoubleStarDoesNot) {
    EXPECT_TRUE(glob_matches("*.txt", "a.txt"));
    EXPECT_FALSE(glob_matches("*.txt", "d/a.txt"));
    EXPECT_TRUE(glob_matches("**.txt", "d/e/a.txt"));
    EXPECT_TRUE(glob_matches("d/**", "d/e/a.txt"));
    EXPECT_TRUE(glob_matches("?.dat", "x.dat"));
    EXPECT_FALSE(glob_matches("?.dat", "/.dat"));
    EXPECT_FALSE(glob_matches("?.dat", "xy.dat"));
    EXPECT_TRUE(glob_matches("", ""));
    EXPECT_FALSE(glob_matches("a", ""));
}

TEST(SyncFilter, FirstMatchWinsAndNoMatchIncludes) {
    PathFilter f({{true, "keep.tmp"}, {false, "*.tmp"}});
    EXPECT_TRUE(f.includes("keep.tmp", false));
    EXPECT_TRUE(f.includes("d/keep.tmp", false));  // no '/': the last component
    EXPECT_FALSE(f.includes("d/other.tmp", false));
    EXPECT_TRUE(f.includes("d/data.bin", false));
}

TEST(SyncFilter, AnchoredAndWholePathPatterns) {
    PathFilter anchored({{false, "/logs"}});
    EXPECT_FALSE(anchored.includes("logs", true));
    EXPECT_TRUE(anchored.includes("run/logs", true));
    PathFilter unanchored({{false, "run/*.log"}});
    EXPECT_FALSE(unanchored.includes("run/a.log", false));
    EXPECT_FALSE(unanchored.includes("x/run/a.log", false));  // any trailing part
    EXPECT_TRUE(unanchored.includes("xrun/a.log", false));    // but from a component's start
    EXPECT_TRUE(unanchored.includes("run/d/a.log", false));
}

TEST(SyncFilter, TrailingSlashMatchesDirectoriesOnly) {
    PathFilter f({{false, "cache/"}});
    EXPECT_FALSE(f.includes("a/cache", true));
    EXPECT_TRUE(f.includes("a/cache", false));
}
