#include "client/sync/sync_plan.h"

#include <gtest/gtest.h>

using namespace rftp::client;

namespace {

Tree tree(std::map<std::string, TreeFile> files, std::set<std::string> dirs = {}) {
    Tree t;
    t.files = std::move(files);
    t.directories = std::move(dirs);
    return t;
}

const SyncItem &item(const SyncPlan &plan, const std::string &path) {
    for (const auto &i : plan.items)
        if (i.path == path) return i;
    throw std::runtime_error("no item " + path);
}

}  // namespace

TEST(SyncPlan, NewChangedUnchangedByDefault) {
    Tree src = tree({{"new", {5, 100}}, {"grown", {6, 100}}, {"touched", {5, 200}}, {"same", {5, 100}}});
    Tree dst = tree({{"grown", {5, 100}}, {"touched", {5, 100}}, {"same", {5, 100}}});
    auto plan = plan_sync(src, dst, Compare::size_and_time, false);
    EXPECT_EQ(item(plan, "new").action, SyncAction::copy_new);
    EXPECT_EQ(item(plan, "grown").reason, "size");
    EXPECT_EQ(item(plan, "touched").reason, "mtime");
    EXPECT_EQ(item(plan, "same").action, SyncAction::unchanged);
    EXPECT_EQ(plan.count(SyncAction::copy_changed).files, 2u);
}

TEST(SyncPlan, AnUnknownTimeIsNeverUnchanged) {
    auto plan = plan_sync(tree({{"f", {5, 100}}}), tree({{"f", {5, std::nullopt}}}), Compare::size_and_time, false);
    EXPECT_EQ(item(plan, "f").reason, "mtime");
    plan = plan_sync(tree({{"f", {5, 100}}}), tree({{"f", {5, std::nullopt}}}), Compare::size, false);
    EXPECT_EQ(item(plan, "f").action, SyncAction::unchanged);
}

TEST(SyncPlan, ChecksumComparesDigestsNotTimes) {
    Tree src = tree({{"same", {5, 1}}, {"other", {5, 1}}, {"unhashed", {5, 1}}});
    Tree dst = tree({{"same", {5, 2}}, {"other", {5, 1}}, {"unhashed", {5, 1}}});
    std::map<std::string, DigestPair> d{{"same", {"aa", "aa"}}, {"other", {"aa", "bb"}}};
    auto plan = plan_sync(src, dst, Compare::checksum, false, d);
    EXPECT_EQ(item(plan, "same").action, SyncAction::unchanged);
    EXPECT_EQ(*item(plan, "same").sha256, "aa");
    EXPECT_EQ(item(plan, "other").reason, "checksum");
    EXPECT_EQ(item(plan, "unhashed").reason, "checksum");
    EXPECT_EQ(same_size_files(src, dst).size(), 3u);
}

TEST(SyncPlan, DeletesOnlyWhenAskedAndDirectoriesChildrenFirst) {
    Tree src = tree({{"a/keep", {1, 1}}}, {"a", "n", "n/m"});
    Tree dst = tree({{"a/keep", {1, 1}}, {"a/old", {3, 1}}, {"x/y/z", {1, 1}}}, {"a", "x", "x/y"});
    EXPECT_EQ(plan_sync(src, dst, Compare::size, false).count(SyncAction::remove).files, 0u);
    auto plan = plan_sync(src, dst, Compare::size, true);
    EXPECT_EQ(plan.count(SyncAction::remove).files, 2u);
    EXPECT_EQ(plan.count(SyncAction::remove).bytes, 4u);
    EXPECT_EQ(plan.directories_to_remove, (std::vector<std::string>{"x/y", "x"}));
    EXPECT_EQ(plan.directories_to_make, (std::vector<std::string>{"n", "n/m"}));
}
