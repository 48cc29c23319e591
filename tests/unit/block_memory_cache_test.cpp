#include "middleware/block_memory_cache.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace rftp::middleware {
namespace {

constexpr std::size_t kKiB = 1u << 10, kMiB = 1u << 20;

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_THREAD, &u);
    return u.ru_minflt;
}

long faults_touching(const BlockMemory &m, std::size_t n) {
    long before = minor_faults();
    std::memset(m.data(), 0x5a, n);
    return minor_faults() - before;
}

// The mapping holding at, from /proc/self/smaps: its range and the kB of
// it the kernel may take back (MADV_FREE).
struct Mapping {
    uintptr_t lo = 0, hi = 0;
    long lazy_free_kib = -1;
};

Mapping mapping_of(const void *at) {
    std::ifstream smaps("/proc/self/smaps");
    const auto addr = reinterpret_cast<uintptr_t>(at);
    Mapping found;
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        uintptr_t lo = 0, hi = 0;
        char dash = 0;
        std::istringstream range(line);
        if (range >> std::hex >> lo >> dash >> hi && dash == '-') {
            inside = lo <= addr && addr < hi;
            if (inside) found = {lo, hi, -1};
        } else if (inside && line.starts_with("LazyFree:")) {
            found.lazy_free_kib = std::stol(line.substr(9));
            return found;
        }
    }
    return found;
}

long lazy_free_kib(const void *at) { return mapping_of(at).lazy_free_kib; }

TEST(BlockMemoryCache, TheNextTransferFindsTheMemoryMappedWithItsPagesInPlace) {
    BlockMemoryCache cache(64 * kMiB);
    BlockMemory first = cache.take(256 * kKiB);
    ASSERT_TRUE(first);
    EXPECT_GT(faults_touching(first, 256 * kKiB), 0);  // a new mapping faults its pages in
    uint8_t *at = first.data();
    cache.give(std::move(first));
    EXPECT_EQ(cache.kept_bytes(), 256 * kKiB);

    BlockMemory again = cache.take(256 * kKiB);
    EXPECT_EQ(again.data(), at);
    EXPECT_EQ(cache.kept_bytes(), 0u);
    EXPECT_EQ(faults_touching(again, 256 * kKiB), 0);
}

TEST(BlockMemoryCache, MarksWhatItKeepsFreeableBeyondItsFirstMebibyte) {
    BlockMemoryCache cache(64 * kMiB);
    BlockMemory small = cache.take(256 * kKiB), big = cache.take(2 * kMiB);
    std::memset(small.data(), 1, 256 * kKiB);
    std::memset(big.data(), 1, 2 * kMiB);
    const uint8_t *small_at = small.data(), *big_at = big.data();
    // Pages of hugetlbfs (a host that reserved some) are never freed lazily.
    const bool big_reclaimable = big.pages() != BlockMemory::Pages::huge;
    const Mapping around_small = mapping_of(small_at);
    if (around_small.lo <= reinterpret_cast<uintptr_t>(big_at) && reinterpret_cast<uintptr_t>(big_at) < around_small.hi)
        GTEST_SKIP() << "SKIPPED: the kernel merged both buffers into one mapping (no transparent huge pages?)";
    ASSERT_EQ(around_small.lazy_free_kib, 0);
    cache.give(std::move(small));  // within kUnmarkedBytes: kept as it is
    cache.give(std::move(big));    // beyond: the kernel may take its pages
    EXPECT_EQ(lazy_free_kib(small_at), 0);
    if (big_reclaimable) {
        EXPECT_GT(lazy_free_kib(big_at), 0);
    }

    // Taken and given back, the small one is counted once, not twice.
    for (int round = 0; round < 8; ++round) cache.give(cache.take(256 * kKiB));
    EXPECT_EQ(lazy_free_kib(small_at), 0);
}

TEST(BlockMemoryCache, TakesTheSmallestKeptMappingThatHoldsTheSize) {
    BlockMemoryCache cache(64 * kMiB);
    BlockMemory big = cache.take(4 * kMiB), small = cache.take(1 * kMiB);
    uint8_t *big_at = big.data(), *small_at = small.data();
    cache.give(std::move(big));
    cache.give(std::move(small));

    EXPECT_EQ(cache.take(512 * kKiB).data(), small_at);
    BlockMemory mid = cache.take(2 * kMiB);
    EXPECT_EQ(mid.data(), big_at);
    EXPECT_GE(mid.size(), 2 * kMiB);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mid.data()) % (2 * kMiB), 0u);  // as allocate aligns it
    BlockMemory fresh = cache.take(8 * kMiB);  // nothing kept holds it
    EXPECT_TRUE(fresh);
    EXPECT_NE(fresh.data(), big_at);
}

TEST(BlockMemoryCache, KeepsNoMoreThanItsLimitAndUnmapsTheOldestFirst) {
    BlockMemoryCache cache(3 * kMiB);
    BlockMemory a = cache.take(kMiB), b = cache.take(kMiB), c = cache.take(2 * kMiB);
    uint8_t *b_at = b.data(), *c_at = c.data();
    cache.give(std::move(a));
    cache.give(std::move(b));
    cache.give(std::move(c));  // 4 MiB kept would be over: a goes
    EXPECT_EQ(cache.kept_bytes(), 3 * kMiB);
    EXPECT_EQ(cache.take(kMiB).data(), b_at);
    EXPECT_EQ(cache.take(kMiB).data(), c_at);

    cache.give(cache.take(4 * kMiB));  // larger than the limit: never kept
    EXPECT_EQ(cache.kept_bytes(), 0u);
}

}  // namespace
}  // namespace rftp::middleware
