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
