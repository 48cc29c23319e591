// The client's reading of LIST lines and its check of names a server sends,
// which decide where `rftp get -r` writes on the local disk.
#include <gtest/gtest.h>

#include "client/batch/remote_tree.h"

using rftp::client::is_safe_entry_name;
using rftp::client::parse_unix_list_line;
using rftp::client::RemoteEntry;

TEST(UnixListLine, FileAndDirectoryWithSpacesInName) {
    RemoteEntry e;
    ASSERT_TRUE(parse_unix_list_line("-rw-r--r--    1 14       50           8192 Jan 01 12:00 small 001.dat", e));
    EXPECT_EQ(e.name, "small 001.dat");
    EXPECT_FALSE(e.is_directory);
    EXPECT_EQ(e.size, 8192u);  // the largest files of a tree start first
    ASSERT_TRUE(parse_unix_list_line("drwxr-xr-x    2 0        0            4096 Mar 03  2023 e f", e));
    EXPECT_EQ(e.name, "e f");
    EXPECT_TRUE(e.is_directory);
}

TEST(UnixListLine, ALineWithoutAGroupColumnReadsToo) {
    RemoteEntry e;
    ASSERT_TRUE(parse_unix_list_line("-rw-r--r-- 1 ftp 1234 Jan 5 12:00 data.bin", e));
    EXPECT_EQ(e.name, "data.bin");
    EXPECT_EQ(e.size, 1234u);
    ASSERT_TRUE(parse_unix_list_line("-rw-r--r-- 1 ftp 99 Dec 31  2023 my file", e));
    EXPECT_EQ(e.name, "my file");  // not "file": the date anchors the name
    EXPECT_EQ(e.size, 99u);
}

TEST(UnixListLine, ALineWithoutADateIsNotRead) {
    RemoteEntry e;
    EXPECT_FALSE(parse_unix_list_line("-rw-r--r-- garbage", e));
    EXPECT_FALSE(parse_unix_list_line("-rw-r--r-- 1 ftp ftp 5 5 Jan 12:00 swapped", e));
    EXPECT_FALSE(parse_unix_list_line("-rw-r--r-- 1 ftp ftp 5 Jan 05 noon name", e));
}

TEST(UnixListLine, ASizeColumnThatIsNotANumberIsUnknown) {
    RemoteEntry e;
    ASSERT_TRUE(parse_unix_list_line("-rw-r--r-- 1 ftp ftp 12k Jan 01 12:00 odd", e));
    EXPECT_EQ(e.name, "odd");
    EXPECT_FALSE(e.size);
}

TEST(UnixListLine, OtherLinesAreNotEntries) {
    RemoteEntry e;
    EXPECT_FALSE(parse_unix_list_line("total 12", e));
    EXPECT_FALSE(parse_unix_list_line("lrwxrwxrwx 1 0 0 4 Jan 01 12:00 link -> target", e));
    EXPECT_FALSE(parse_unix_list_line("-rw-r--r-- 1 0 0 4 Jan 01", e));  // no name
    EXPECT_FALSE(parse_unix_list_line("", e));
}

TEST(EntryName, OnlyOneHarmlessComponentIsSafe) {
    EXPECT_TRUE(is_safe_entry_name("data.bin"));
    EXPECT_TRUE(is_safe_entry_name("..hidden"));
    EXPECT_FALSE(is_safe_entry_name(""));
    EXPECT_FALSE(is_safe_entry_name("."));
    EXPECT_FALSE(is_safe_entry_name(".."));
    EXPECT_FALSE(is_safe_entry_name("../escape"));
    EXPECT_FALSE(is_safe_entry_name("/etc/passwd"));
    EXPECT_FALSE(is_safe_entry_name(std::string("a\0b", 3)));
}

using rftp::client::listing_key;
using rftp::client::RawListing;
using rftp::client::split_tree_listing;

TEST(TreeListing, KeysSpellADirectoryOneWay) {
    EXPECT_EQ(listing_key("/a/b/"), "/a/b");
    EXPECT_EQ(listing_key("/a//./b"), "/a/b");
    EXPECT_EQ(listing_key("/"), "/");
    EXPECT_EQ(listing_key(""), "/");
}

TEST(TreeListing, EachDirectoryGetsItsOwnLinesUnderItsName) {
    RawListing tree{.machine = true,
                    .text = "type=cdir;perm=el; .\r\n"
                            "type=dir;perm=el; a b\r\n"
                            "type=file;size=3; f.bin\r\n"
                            "type=cdir;perm=el; a b\r\n"
                            "type=file;size=1; a b/g.bin\r\n"};
    auto split = split_tree_listing("/top/", tree);
    ASSERT_TRUE(split);
    ASSERT_EQ(split->size(), 2u);
    EXPECT_EQ(split->at("/top"), "type=cdir;perm=el; .\r\ntype=dir;perm=el; a b\r\ntype=file;size=3; f.bin\r\n");
    EXPECT_EQ(split->at("/top/a b"), "type=cdir;perm=el; .\r\ntype=file;size=1; g.bin\r\n");
}

TEST(TreeListing, LinesOutOfOrderAreNotUsedAtAll) {
    const std::string top = "type=cdir;perm=el; .\r\ntype=dir;perm=el; a\r\ntype=dir;perm=el; b\r\n";
    // An entry of b among a's lines: a name with a line break could say that.
    EXPECT_FALSE(split_tree_listing("/", {true, top + "type=cdir;perm=el; a\r\ntype=file;size=1; b/x\r\n"}));
    // An entry before any directory's own line.
    EXPECT_FALSE(split_tree_listing("/", {true, "type=file;size=1; x\r\n"}));
    // A directory twice.
    EXPECT_FALSE(split_tree_listing("/", {true, top + "type=cdir;perm=el; a\r\ntype=cdir;perm=el; a\r\n"}));
    // A line that does not read.
    EXPECT_FALSE(split_tree_listing("/", {true, top + "no facts here\r\n"}));
    EXPECT_TRUE(split_tree_listing("/", {true, top + "type=cdir;perm=el; a\r\ntype=file;size=1; a/x\r\n"}));
}
