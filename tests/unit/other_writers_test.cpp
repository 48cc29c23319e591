// Who else may change a user's root's parents (event=root_unsafe at start)
// or the config: owners other than root and rftpd's user, and group or
// world write, which a sticky directory's does not count as.
#include "daemon/vfs/other_writers.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

namespace fs = std::filesystem;
using rftp::daemon::root_path_problem;

namespace {

class RootPathProblem : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/rftp-root-path-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;  // mode 0700, ours, in the sticky /tmp
        fs::create_directories(base_ / "srv" / "alice");
    }
    void TearDown() override { fs::remove_all(base_); }
    std::string root() const { return (base_ / "srv" / "alice").string(); }

    fs::path base_;
};

}  // namespace

TEST_F(RootPathProblem, NoneWhereOnlyRootAndRftpdMayChangeTheParents) {
    // /tmp is writable by anyone but sticky: others cannot rename our entry.
    EXPECT_EQ(root_path_problem(root()), std::nullopt);
    // The root itself is the user's to change.
    ASSERT_EQ(::chmod(root().c_str(), 0777), 0);
    EXPECT_EQ(root_path_problem(root()), std::nullopt);
    EXPECT_EQ(root_path_problem("/"), std::nullopt);
}

TEST_F(RootPathProblem, AParentAnyoneMayWriteIsNamedWithItsFix) {
    const std::string parent = (base_ / "srv").string();
    ASSERT_EQ(::chmod(parent.c_str(), 0777), 0);
    auto problem = root_path_problem(root());
    ASSERT_TRUE(problem);
    EXPECT_EQ(*problem, parent + " is writable by anyone (mode 0777), who could put another directory in place of "
                                 "the root; move the root, or chmod go-w " + parent);
    // Also where the rest of the root's path is not there yet.
    EXPECT_TRUE(root_path_problem(parent + "/not-yet/alice"));
    // Sticky, as /tmp: others may add entries, not replace ours.
    ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);
    EXPECT_EQ(root_path_problem(root()), std::nullopt);
}

TEST_F(RootPathProblem, APartNotThereYetThatOthersMayCreateIsNamed) {
    // Sticky or not, anyone may make what is missing, and own it.
    const std::string parent = (base_ / "srv").string();
    ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);
    auto problem = root_path_problem(parent + "/later/alice");
    ASSERT_TRUE(problem);
    EXPECT_EQ(*problem, parent + "/later does not exist yet, and " + parent + " lets anyone create it and so choose "
                        "the root's contents; create it now (owned by root or rftpd), or move the root");
    problem = root_path_problem(parent + "/bob");  // the root itself missing
    ASSERT_TRUE(problem);
    EXPECT_EQ(problem->rfind(parent + "/bob does not exist yet", 0), 0u) << *problem;
    // Where only root and rftpd may create it, a missing root is no problem.
    ASSERT_EQ(::chmod(parent.c_str(), 0755), 0);
    EXPECT_EQ(root_path_problem(parent + "/later/alice"), std::nullopt);
}

TEST_F(RootPathProblem, AParentOwnedBySomeoneElseIsNamed) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the directory away";
    const std::string parent = (base_ / "srv").string();
    ASSERT_EQ(::chown(parent.c_str(), 12345, 0), 0);
    auto problem = root_path_problem(root());
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find(parent + " is owned by uid 12345, neither root nor the user rftpd runs as"),
              std::string::npos) << *problem;
    EXPECT_NE(problem->find("chown root " + parent), std::string::npos) << *problem;
}
