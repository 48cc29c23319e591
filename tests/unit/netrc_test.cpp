#include "client/netrc.h"

#include <gtest/gtest.h>

using namespace rftp::client;

TEST(Netrc, MachineLoginPasswordAccount) {
    auto e = parse_netrc("machine a.example login alice password s3cret account acc\n"
                         "machine b.example\n  login bob\n  password pw\n");
    ASSERT_TRUE(e) << e.error().message;
    ASSERT_EQ(e->size(), 2u);
    EXPECT_EQ((*e)[0].machine, "a.example");
    EXPECT_EQ(*(*e)[0].login, "alice");
    EXPECT_EQ(*(*e)[0].password, "s3cret");
    EXPECT_EQ(*(*e)[0].account, "acc");
    EXPECT_EQ(*(*e)[1].login, "bob");
}

TEST(Netrc, DefaultIsUsedWhenNoMachineMatches) {
    auto e = parse_netrc("machine a login x password 1\ndefault login anonymous password me@\n");
    ASSERT_TRUE(e);
    const NetrcEntry *hit = find_netrc_entry(*e, "zzz", std::nullopt);
    ASSERT_NE(hit, nullptr);
    EXPECT_TRUE(hit->is_default);
    EXPECT_EQ(*hit->password, "me@");
    EXPECT_EQ(*find_netrc_entry(*e, "a", std::nullopt)->password, "1");
}

TEST(Netrc, EntryForAnotherUserDoesNotMatch) {
    auto e = parse_netrc("machine h login alice password pa\nmachine h login bob password pb\n");
    ASSERT_TRUE(e);
    EXPECT_EQ(*find_netrc_entry(*e, "h", std::string("bob"))->password, "pb");
    EXPECT_EQ(find_netrc_entry(*e, "h", std::string("carol")), nullptr);
    EXPECT_EQ(*find_netrc_entry(*e, "h", std::nullopt)->login, "alice");
}

TEST(Netrc, MacdefBodyIsSkippedUntilEmptyLine) {
    auto e = parse_netrc("macdef init\nlogin evil password evil\ncd /x\n\nmachine h login u password p\n");
    ASSERT_TRUE(e) << e.error().message;
    ASSERT_EQ(e->size(), 1u);
    EXPECT_EQ(*(*e)[0].login, "u");
}

TEST(Netrc, MacdefBodyWithCrlfLinesEndsAtItsEmptyLine) {
    auto e = parse_netrc("macdef init\r\nlogin evil password evil\r\n\r\nmachine h login u password p\r\n");
    ASSERT_TRUE(e) << e.error().message;
    ASSERT_EQ(e->size(), 1u);
    EXPECT_EQ(*(*e)[0].login, "u");
}

TEST(Netrc, MachineNamesMatchWhateverTheirCase) {
    auto e = parse_netrc("machine Data.Example login u password p\n");
    ASSERT_TRUE(e);
    const NetrcEntry *hit = find_netrc_entry(*e, "data.EXAMPLE", std::nullopt);
    ASSERT_NE(hit, nullptr);
    EXPECT_EQ(*hit->password, "p");
    EXPECT_EQ(find_netrc_entry(*e, "data.example.org", std::nullopt), nullptr);
}

TEST(Netrc, QuotedTokensAndComments) {
    auto e = parse_netrc("# my hosts\nmachine h login \"a b\" password \"p\\\"q\" # trailing\n");
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(*(*e)[0].login, "a b");
    EXPECT_EQ(*(*e)[0].password, "p\"q");
}

TEST(Netrc, ErrorsNameTheLine) {
    auto missing = parse_netrc("machine h\nlogin");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("line 2"), std::string::npos) << missing.error().message;
    EXPECT_FALSE(parse_netrc("login x"));
    EXPECT_FALSE(parse_netrc("machine h passwd x"));
    EXPECT_FALSE(parse_netrc("machine h password \"open"));
}

TEST(Netrc, EmptyFileHasNoEntries) {
    auto e = parse_netrc("  \n# nothing\n");
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->empty());
}
