#include "client/url.h"

#include <gtest/gtest.h>

using rftp::client::parse_url;
using rftp::client::percent_decode;

TEST(Url, RftpSchemeDefaultsToPort2121) {
    auto u = parse_url("rftp://host.example/data/a.bin");
    ASSERT_TRUE(u) << u.error().message;
    EXPECT_EQ(u->scheme, "rftp");
    EXPECT_EQ(u->host, "host.example");
    EXPECT_EQ(u->port, 2121);
    EXPECT_EQ(u->path, "/data/a.bin");
    EXPECT_FALSE(u->user);
}

TEST(Url, FtpSchemeDefaultsToPort21AndTakesExplicitPort) {
    auto u = parse_url("ftp://h/x");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->port, 21);
    auto v = parse_url("FTP://alice@h:2100/x");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->scheme, "ftp");
    EXPECT_EQ(v->port, 2100);
    EXPECT_EQ(*v->user, "alice");
}

TEST(Url, MissingPathIsRoot) {
    auto u = parse_url("rftp://h:99");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->path, "/");
    EXPECT_EQ(u->port, 99);
}

TEST(Url, Ipv6InBrackets) {
    auto u = parse_url("rftp://bob@[::1]:3000/d/");
    ASSERT_TRUE(u) << u.error().message;
    EXPECT_EQ(u->host, "::1");
    EXPECT_EQ(u->port, 3000);
    EXPECT_EQ(u->path, "/d/");
    EXPECT_EQ(u->authority(), "[::1]:3000");
    auto v = parse_url("ftp://[fe80::1]/");
    ASSERT_TRUE(v);
    EXPECT_EQ(v->port, 21);
}

TEST(Url, AnIpv6ZoneIsWrittenPercent25) {
    // RFC 6874: the zone's % is itself percent-encoded; getaddrinfo takes it plain.
    for (const char *text : {"rftp://[fe80::1%25lo]:2121/x", "rftp://[fe80::1%lo]:2121/x"}) {
        auto u = parse_url(text);
        ASSERT_TRUE(u) << text << ": " << u.error().message;
        EXPECT_EQ(u->host, "fe80::1%lo") << text;
    }
}

TEST(Url, PercentDecodesUserAndPath) {
    auto u = parse_url("rftp://j%40doe.org@h/my%20dir/f%25.txt");
    ASSERT_TRUE(u) << u.error().message;
    EXPECT_EQ(*u->user, "j@doe.org");
    EXPECT_EQ(u->path, "/my dir/f%.txt");
}

TEST(Url, UnescapedAtInUserBindsToLastAt) {
    auto u = parse_url("ftp://a@b.c@h/x");
    ASSERT_TRUE(u);
    EXPECT_EQ(*u->user, "a@b.c");
    EXPECT_EQ(u->host, "h");
}

TEST(Url, RejectsBadInput) {
    for (const char *bad : {"host/path", "http://h/x", "rftp:///x", "rftp://h:0/x", "rftp://h:65536/x",
                            "rftp://h:12ab/x", "rftp://[::1/x", "rftp://[::1]x/y", "rftp://[host]/x",
                            "rftp://u:secret@h/x", "rftp://@h/x", "rftp://h/a%2", "rftp://h/a%zz",
                            "rftp://h/a%00b", "rftp://h/a?b", "rftp://h:/x"}) {
        EXPECT_FALSE(parse_url(bad)) << bad;
    }
}

TEST(Url, PercentDecodeRejectsTruncatedEscapes) {
    EXPECT_FALSE(percent_decode("%"));
    EXPECT_FALSE(percent_decode("a%4"));
    EXPECT_EQ(*percent_decode("%41%62"), "Ab");
}

TEST(Url, PasswordIsRefusedWithoutBeingRepeated) {
    auto u = parse_url("rftp://alice:s3cret@host/data");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().message.find("s3cret"), std::string::npos) << u.error().message;
    EXPECT_NE(u.error().message.find("alice:***@host"), std::string::npos) << u.error().message;
}

TEST(Url, WithoutPasswordLeavesOtherUrlsAlone) {
    using rftp::client::without_password;
    EXPECT_EQ(without_password("ftp://u:p:q@a@h:21/x:y@z"), "ftp://u:***@h:21/x:y@z");
    EXPECT_EQ(without_password("rftp://u@h:2121/a:b"), "rftp://u@h:2121/a:b");
    EXPECT_EQ(without_password("not a url u:p@h"), "not a url u:p@h");
    // A '/' typed into the password: its end is the last '@'.
    EXPECT_EQ(without_password("ftp://u:pa/ss@h/x"), "ftp://u:***@h/x");
    // Where a port and an '@' in the path make it ambiguous, rather too much hidden than a secret shown.
    EXPECT_EQ(without_password("rftp://h:2121/a@b"), "rftp://h:***@b");
}
