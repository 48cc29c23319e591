#include "middleware/block_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace rftp::middleware {
namespace {

constexpr std::size_t kMebibyte = 1u << 20;

bool transparent_huge_pages_off() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    return !std::getline(f, line) || line.find("[never]") != std::string::npos;
}

// AnonHugePages of the mapping that holds addr, in KiB (/proc/self/smaps).
long anon_huge_kib(const void *addr) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto at = reinterpret_cast<uintptr_t>(addr);
    while (std::getline(smaps, line)) {
        uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream head(line);
        if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo <= at && at < hi;
        } else if (inside && line.starts_with("AnonHugePages:")) {
            return std::stol(line.substr(std::strlen("AnonHugePages:")));
        }
    }
    return -1;
}

TEST(BlockMemory, SmallAllocationsArePlainPages) {
    BlockMemory m = BlockMemory::allocate(64 * 1024);
    ASSERT_TRUE(m);
    EXPECT_EQ(m.size(), 64u * 1024);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 4096, 0u);
    EXPECT_EQ(m.pages(), BlockMemory::Pages::small);
}

TEST(BlockMemory, BlockSizedAllocationsAreAlignedForHugePages) {
    BlockMemory m = BlockMemory::allocate(2 * (4 * kMebibyte + 4096));
    ASSERT_TRUE(m);
    EXPECT_EQ(m.size(), 10 * kMebibyte);  // rounded up to whole 2 MiB pages
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % (2 * kMebibyte), 0u);
    std::memset(m.data(), 0xA5, m.size());  // all of it is ours
    EXPECT_EQ(m.data()[m.size() - 1], 0xA5);
}

// rdma.max_pinned counts what a channel pins by this: it must be what is mapped.
TEST(BlockMemory, MappedSizeIsWhatAllocateMaps) {
    for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{64 * 1024 + 1}, 2 * kMebibyte - 1, 2 * kMebibyte,
                             2 * (4 * kMebibyte + 4096), 9 * kMebibyte + 1}) {
        BlockMemory m = BlockMemory::allocate(size);
        ASSERT_TRUE(m) << size;
        EXPECT_GE(m.size(), size);
        EXPECT_EQ(BlockMemory::mapped_size(size), size < 2 * kMebibyte ? (size + 4095) / 4096 * 4096 : m.size()) << size;
    }
    EXPECT_EQ(BlockMemory::mapped_size(2 * (4 * kMebibyte + 4096)), 10 * kMebibyte);
}

TEST(BlockMemory, TouchedBlocksSitInHugePages) {
    if (transparent_huge_pages_off()) GTEST_SKIP() << "transparent huge pages are off on this system";
    BlockMemory m = BlockMemory::allocate(8 * kMebibyte);
    ASSERT_TRUE(m);
    if (m.pages() == BlockMemory::Pages::huge) GTEST_SKIP() << "explicit huge pages reserved: not transparent ones";
    ASSERT_EQ(m.pages(), BlockMemory::Pages::transparent_huge);
    std::memset(m.data(), 1, m.size());
    EXPECT_GT(anon_huge_kib(m.data()), 0);
}

TEST(BlockMemory, MovingHandsOverTheMapping) {
    BlockMemory a = BlockMemory::allocate(4 * kMebibyte);
    uint8_t *p = a.data();
    BlockMemory b = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_EQ(b.data(), p);
    EXPECT_STREQ(huge_pages_word(BlockMemory::Pages::small), "no");
}

}  // namespace
}  // namespace rftp::middleware
