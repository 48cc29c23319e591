#include "protocol/mlsx_facts.h"

#include <gtest/gtest.h>

using namespace rftp::ftp;

TEST(MlsxFacts, ParsesFactsAndName) {
    auto e = parse_mlsx_line("Type=file;Size=1024;Modify=20240131120501;Perm=rwadf; data file.bin");
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->name, "data file.bin");
    EXPECT_EQ(e->type(), "file");
    EXPECT_EQ(*e->size(), 1024u);
    EXPECT_EQ(*e->modify(), "20240131120501");
    EXPECT_EQ(*e->fact("perm"), "rwadf");
    EXPECT_FALSE(e->fact("unique"));
}

TEST(MlsxFacts, MlstBodyLineWithoutItsIndent) {
    std::string body = " type=dir;UNIX.mode=0755; /pub";
    auto e = parse_mlsx_line(std::string_view(body).substr(1));
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_EQ(e->type(), "dir");
    EXPECT_EQ(*e->fact("unix.mode"), "0755");
    EXPECT_EQ(e->name, "/pub");
    EXPECT_FALSE(e->size());
}

TEST(MlsxFacts, NoFactsAtAll) {
    auto e = parse_mlsx_line(" name;with;semis");
    ASSERT_TRUE(e) << e.error().message;
    EXPECT_TRUE(e->facts.empty());
    EXPECT_EQ(e->name, "name;with;semis");
}

TEST(MlsxFacts, RejectsMalformedLines) {
    EXPECT_FALSE(parse_mlsx_line("type=file;size=1"));        // no pathname
    EXPECT_FALSE(parse_mlsx_line("type=file;size=1 x"));      // fact not ended by ';'
    EXPECT_FALSE(parse_mlsx_line("typefile; x"));             // no '='
    EXPECT_FALSE(parse_mlsx_line("=file; x"));                // empty name
    EXPECT_FALSE(parse_mlsx_line("type=file; "));             // empty pathname
}

TEST(MlsxFacts, BadSizeIsAbsent) {
    auto e = parse_mlsx_line("size=12x; f");
    ASSERT_TRUE(e);
    EXPECT_FALSE(e->size());
}

TEST(MlsxFacts, FormatsTimeVal) {
    EXPECT_EQ(format_mlsx_time("20240131120501.123"), "2024-01-31 12:05");
    EXPECT_EQ(format_mlsx_time("garbage"), "garbage");
}
