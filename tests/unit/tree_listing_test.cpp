// MLSR's walk (daemon/listing/tree_listing.h) on a real tree, with its
// bounds made small: what it sends, in what pieces, and where it stops.
#include "daemon/listing/tree_listing.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace rftp::daemon;
namespace fs = std::filesystem;

namespace {

class TreeListingTest : public ::testing::Test {
protected:
    // Three directories of ten files each, one of them two levels down.
    void SetUp() override {
        char tmpl[] = "/tmp/rftp-tree-listing-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        for (const char *dir : {"t/a", "t/b", "t/b/c"}) {
            fs::create_directories(root_ / dir);
            for (int i = 0; i < 10; ++i) std::ofstream(root_ / dir / ("f" + std::to_string(i))) << i;
        }
    }
    void TearDown() override { fs::remove_all(root_); }

    // The pieces the walk sent, and how it ended.
    struct Walk {
        std::vector<std::string> pieces;
        rftp::Status status;
        std::string text() const {
            std::string all;
            for (const auto &p : pieces) all += p;
            return all;
        }
    };
    Walk walk(const TreeListingBounds &bounds) {
        auto root = UserRoot::open(root_.string(), false);
        EXPECT_TRUE(root) << root.error().message;
        Walk w;
        w.status = list_tree(
            *root, "/t",
            [&](std::string_view lines) {
                w.pieces.emplace_back(lines);
                return rftp::Status{};
            },
            [] { return false; }, bounds);
        return w;
    }

    fs::path root_;
};

std::size_t lines_in(const std::string &text) {
    std::size_t n = 0;
    for (std::size_t at = text.find("\r\n"); at != std::string::npos; at = text.find("\r\n", at + 2)) ++n;
    return n;
}

}  // namespace

TEST_F(TreeListingTest, ListsEveryEntryAndEachDirectoryOnce) {
    Walk w = walk({});
    ASSERT_TRUE(w.status) << w.status.error().message;
    const std::string all = w.text();
    // Four cdir lines (t, a, b, b/c), thirty files, three directory entries.
    EXPECT_EQ(lines_in(all), 4u + 30u + 3u) << all;
    EXPECT_EQ(w.pieces.size(), 1u) << "a small tree goes in one piece";
}

TEST_F(TreeListingTest, SendsItsLinesInPiecesOfAboutTheBound) {
    const std::string whole = walk({}).text();
    TreeListingBounds small;
    small.piece_bytes = 200;
    Walk w = walk(small);
    ASSERT_TRUE(w.status) << w.status.error().message;
    EXPECT_EQ(w.text(), whole);
    EXPECT_GT(w.pieces.size(), whole.size() / 400);
    for (const auto &piece : w.pieces) {
        EXPECT_LT(piece.size(), 200u + 200u) << "a piece is sent once it passes the bound";
        EXPECT_TRUE(piece.ends_with("\r\n")) << "pieces hold whole lines";
    }
}

TEST_F(TreeListingTest, StopsPastTheEntryBound) {
    TreeListingBounds bounds;
    bounds.max_entries = 25;
    Walk w = walk(bounds);
    ASSERT_FALSE(w.status);
    EXPECT_EQ(w.status.error().code, -E2BIG);
    EXPECT_NE(w.status.error().message.find("more than 25 entries"), std::string::npos);
    EXPECT_LE(lines_in(w.text()), 25u + 4u) << "nothing past the bound is sent";
}

TEST_F(TreeListingTest, StopsPastTheByteBoundBeforeSendingPastIt) {
    TreeListingBounds bounds;
    bounds.max_bytes = 1000;
    bounds.piece_bytes = 100;
    Walk w = walk(bounds);
    ASSERT_FALSE(w.status);
    EXPECT_EQ(w.status.error().code, -E2BIG);
    EXPECT_LE(w.text().size(), 1000u);
}

TEST_F(TreeListingTest, StopsWhenTooManyDirectoriesWaitToBeListed) {
    TreeListingBounds bounds;
    bounds.max_pending_path_bytes = 8;  // "/t" and one more
    Walk w = walk(bounds);
    ASSERT_FALSE(w.status);
    EXPECT_EQ(w.status.error().code, -E2BIG);
    EXPECT_NE(w.status.error().message.find("directories waiting"), std::string::npos);
}
