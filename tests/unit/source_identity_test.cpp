// The token rftp names its upload's source with (SRCE), and what rftpd
// accepts as one: it must pass unchanged through a command line, an
// extended attribute and an MLSx fact value.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "protocol/source_identity.h"

using rftp::ftp::source_token;
using rftp::ftp::valid_source_token;

namespace {

TEST(SourceIdentity, TheTokenIsTheSizeAndBothTimesToTheNanosecond) {
    EXPECT_EQ(source_token(4294967296ull, timespec{1764118000, 123456789}, timespec{1764118002, 1}),
              "4294967296:1764118000.123456789:1764118002.000000001");
    EXPECT_EQ(source_token(0, timespec{0, 7}, timespec{0, 7}), "0:0.000000007:0.000000007");
    EXPECT_NE(source_token(10, timespec{5, 1}, timespec{6, 0}), source_token(10, timespec{5, 2}, timespec{6, 0}));
    // The same size and modification time (cp -p, rsync -t), another file.
    EXPECT_NE(source_token(10, timespec{5, 1}, timespec{6, 0}), source_token(10, timespec{5, 1}, timespec{7, 0}));
}

TEST(SourceIdentity, EveryTokenRftpMakesIsOneRftpdAccepts) {
    const timespec latest{INT64_MAX, 999999999}, earliest{INT64_MIN, 0};
    EXPECT_TRUE(valid_source_token(source_token(UINT64_MAX, latest, latest)));
    EXPECT_TRUE(valid_source_token(source_token(UINT64_MAX, earliest, earliest)));  // before 1970: a sign, still fine
}

TEST(SourceIdentity, NothingThatCouldBreakAReplyLineOrAFactIsAccepted) {
    for (const std::string &bad : std::initializer_list<std::string>{"", "a;b", "a b", "a=b", "a\r\n250 x", std::string("a\0b", 3), "\xc3\xa9",
                            std::string(rftp::ftp::kMaxSourceToken + 1, '1')})
        EXPECT_FALSE(valid_source_token(bad)) << bad;
    EXPECT_TRUE(valid_source_token(std::string(rftp::ftp::kMaxSourceToken, '1')));
}

}  // namespace
