#include "client/sync/manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "client/sync/files_from.h"

using namespace rftp::client;

namespace {

std::string temp_file(const std::string &name) {
    return (std::filesystem::temp_directory_path() / ("rftp-sync-test-" + name)).string();
}

}  // namespace

TEST(SyncManifest, RoundTripsAwkwardNamesInBothFormats) {
    const std::string digest(64, 'a');
    std::vector<ManifestEntry> entries{{"z\tab\\c\nd", 7, 1700000000, digest}, {"a b/ü.dat", 0, std::nullopt, std::nullopt}};
    for (bool json : {false, true}) {
        const std::string file = temp_file(json ? "m.jsonl" : "m.tsv");
        ASSERT_TRUE(write_manifest(file, entries, json));
        auto back = read_manifest(file);
        ASSERT_TRUE(back) << back.error().message;
        ASSERT_EQ(back->size(), 2u);
        EXPECT_EQ((*back)[0].path, "a b/ü.dat");  // sorted by path
        EXPECT_FALSE((*back)[0].mtime);
        EXPECT_EQ((*back)[1].path, "z\tab\\c\nd");
        EXPECT_EQ(*(*back)[1].mtime, 1700000000);
        EXPECT_EQ(*(*back)[1].sha256, digest);
        std::filesystem::remove(file);
    }
}

TEST(SyncManifest, ABadLineIsRefusedWithItsNumber) {
    const std::string file = temp_file("bad.tsv");
    std::ofstream(file) << "# rftp manifest 1\nok\t1\t-\t-\nbroken\tx\t-\t-\n";
    auto back = read_manifest(file);
    ASSERT_FALSE(back);
    EXPECT_NE(back.error().message.find(":3:"), std::string::npos) << back.error().message;
    std::filesystem::remove(file);
}

TEST(SyncFilesFrom, NormalizesAndKeepsWhatIsBeneath) {
    const std::string file = temp_file("list");
    std::ofstream(file) << "./a//b/\n# comment\n\nc.dat\r\n";
    auto listed = read_files_from(file, false);
    ASSERT_TRUE(listed) << listed.error().message;
    EXPECT_EQ(*listed, (std::set<std::string>{"a/b", "c.dat"}));
    Tree t;
    t.files = {{"a/b/x", {}}, {"a/y", {}}, {"c.dat", {}}, {"c.dat.old", {}}};
    t.directories = {"a", "a/b", "a/z"};
    keep_only(t, *listed);
    EXPECT_EQ(t.files.size(), 2u);
    EXPECT_TRUE(t.files.contains("a/b/x") && t.files.contains("c.dat"));
    EXPECT_EQ(t.directories, (std::set<std::string>{"a", "a/b"}));
    std::ofstream(file) << "x\n../up\n";
    EXPECT_FALSE(read_files_from(file, false));
    std::filesystem::remove(file);
}
