// Byte counts as the daemon's config and the client's options read them:
// one rule for both (common/byte_size.h).
#include <gtest/gtest.h>

#include "common/byte_size.h"

using rftp::byte_size_text;
using rftp::human_bytes;
using rftp::parse_byte_size;

TEST(ByteSize, ReadsBinaryMultiplesWithOrWithoutAByteSuffix) {
    for (auto [text, bytes] : std::initializer_list<std::pair<const char *, uint64_t>>{
             {"65536", 65536}, {"512B", 512}, {"512b", 512}, {"64K", 64u << 10}, {"64k", 64u << 10},
             {"8M", 8u << 20}, {"8MB", 8u << 20}, {"8MiB", 8u << 20}, {"8mib", 8u << 20}, {"1G", 1u << 30},
             {"1GiB", 1u << 30}}) {
        EXPECT_EQ(parse_byte_size(text), bytes) << text;
    }
}

TEST(ByteSize, RefusesWhatIsNotASize) {
    for (const char *text : {"", "M", "-1", "1T", "8Mi", "8MBB", "512iB", "8 M", "1.5G", "99999999999999999999G", "17179869184G"})
        EXPECT_FALSE(parse_byte_size(text)) << text;
}

TEST(ByteSize, WritesTheShortestExactText) {
    EXPECT_EQ(byte_size_text(8u << 20), "8M");
    EXPECT_EQ(byte_size_text(512u << 10), "512K");
    EXPECT_EQ(byte_size_text(4097), "4097");
    EXPECT_EQ(byte_size_text(0), "0");
    for (uint64_t n : {uint64_t{1} << 20, uint64_t{3} << 10, uint64_t{12345}}) EXPECT_EQ(parse_byte_size(byte_size_text(n)), n);
}

TEST(ByteSize, HumanBytesHasOneDecimalUnlessWhole) {
    EXPECT_EQ(human_bytes(512), "512 bytes");
    EXPECT_EQ(human_bytes(64.0 * (1 << 20)), "64 MiB");
    EXPECT_EQ(human_bytes(1.5 * (1 << 30)), "1.5 GiB");
}
