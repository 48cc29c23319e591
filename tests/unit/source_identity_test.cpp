// The token rftp names its upload's source with (SRCE), and what rftpd
// accepts as one: it must pass unchanged through a command line, an
// extended attribute and an MLSx fact value.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "protocol/source_identity.h"

using rftp::ftp::source_token;
using rftp::ftp::valid_source_token;

namespace {

TEST(SourceIdentity, TheTokenIsTheSizeAndTheModificationTimeToTheNanosecond) {
    EXPECT_EQ(source_token(4294967296ull, timespec{1764118000, 123456789}), "4294967296:1764118000.123456789");
    EXPECT_EQ(source_token(0, timespec{0, 7}), "0:0.000000007");
    EXPECT_NE(source_token(10, timespec{5, 1}), source_token(10, timespec{5, 2}));
}

TEST(SourceIdentity, EveryTokenRftpMakesIsOneRftpdAccepts) {
    EXPECT_TRUE(valid_source_token(source_token(UINT64_MAX, timespec{INT64_MAX, 999999999})));
    EXPECT_TRUE(valid_source_token(source_token(1, timespec{-1, 0})));  // before 1970: a sign, still fine
}

TEST(SourceIdentity, NothingThatCouldBreakAReplyLineOrAFactIsAccepted) {
    for (const std::string &bad : std::initializer_list<std::string>{"", "a;b", "a b", "a=b", "a\r\n250 x", std::string("a\0b", 3), "\xc3\xa9",
                            std::string(rftp::ftp::kMaxSourceToken + 1, '1')})
        EXPECT_FALSE(valid_source_token(bad)) << bad;
    EXPECT_TRUE(valid_source_token(std::string(rftp::ftp::kMaxSourceToken, '1')));
}

}  // namespace
