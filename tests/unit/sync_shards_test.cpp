#include "client/sync/shards.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <set>

using namespace rftp::client;

namespace {

std::vector<SyncItem> items_of(const std::vector<uint64_t> &sizes) {
    std::vector<SyncItem> items;
    for (std::size_t i = 0; i < sizes.size(); ++i)
        items.push_back(SyncItem{"f" + std::to_string(i), SyncAction::copy_new, "", sizes[i], {}, {}, {}});
    return items;
}

uint64_t bytes_of(const std::vector<SyncItem> &items) {
    return std::accumulate(items.begin(), items.end(), uint64_t{0}, [](uint64_t a, const SyncItem &i) { return a + i.size; });
}

}  // namespace

TEST(SyncShards, EveryFileInExactlyOneShareAndTheSameEachTime) {
    std::vector<uint64_t> sizes;
    for (int i = 0; i < 1000; ++i) sizes.push_back((i * 7919) % 100000);
    const auto items = items_of(sizes);
    std::multiset<std::string> seen;
    for (std::size_t k = 0; k < 4; ++k) {
        auto share = share_of(items, {k, 4});
        EXPECT_EQ(share.size(), share_of(items, {k, 4}).size());
        for (std::size_t i = 0; i < share.size(); ++i) EXPECT_EQ(share[i].path, share_of(items, {k, 4})[i].path);
        for (const auto &item : share) seen.insert(item.path);
    }
    EXPECT_EQ(seen.size(), items.size());
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), items.size());
}

TEST(SyncShards, OneHugeFileDoesNotTakeTheSmallOnesWithIt) {
    std::vector<uint64_t> sizes{uint64_t{10} << 30};
    for (int i = 0; i < 3000; ++i) sizes.push_back(64 << 10);
    const auto items = items_of(sizes);
    auto first = share_of(items, {0, 4});
    ASSERT_EQ(first.size(), 1u);
    EXPECT_EQ(first[0].path, "f0");
    for (std::size_t k = 1; k < 4; ++k) {
        auto share = share_of(items, {k, 4});
        EXPECT_EQ(share.size(), 1000u);
        EXPECT_EQ(bytes_of(share), 1000u * (64 << 10));
    }
}

TEST(SyncShards, ParsesKOfNAndSlurmArrays) {
    auto id = parse_shard("2/4");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->index, 1u);
    EXPECT_EQ(id->count, 4u);
    for (const char *bad : {"0/4", "5/4", "1/0", "x/2", "1", "1/2/3"}) EXPECT_FALSE(parse_shard(bad)) << bad;
    ::setenv("SLURM_ARRAY_TASK_ID", "12", 1);
    ::setenv("SLURM_ARRAY_TASK_MIN", "10", 1);
    ::setenv("SLURM_ARRAY_TASK_COUNT", "4", 1);
    id = parse_shard("auto");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->index, 2u);
    EXPECT_EQ(id->count, 4u);
    for (const char *v : {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"}) ::unsetenv(v);
    EXPECT_FALSE(parse_shard("auto"));
    ::setenv("JOB_COMPLETION_INDEX", "3", 1);
    id = parse_shard("auto/5");
    ASSERT_TRUE(id);
    EXPECT_EQ(id->index, 3u);
    EXPECT_EQ(id->count, 5u);
    EXPECT_FALSE(parse_shard("auto/3"));  // index 3 is no share of 3
    ::unsetenv("JOB_COMPLETION_INDEX");
}
