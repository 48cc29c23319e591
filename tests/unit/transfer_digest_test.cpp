// HASH answers from a digest taken during a transfer only while the file is
// the one that was transferred: same inode, size and modification time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/unique_fd.h"
#include "daemon/data/transfer_digest.h"

using namespace rftp;
using namespace rftp::daemon;

namespace {

// A new file at path holding "abc"; empty (false) when it could not be made.
UniqueFd file_of_abc(const std::string &path) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (fd && ::write(fd.get(), "abc", 3) != 3) return UniqueFd();
    return fd;
}

}  // namespace

TEST(TransferDigest, MatchesOnlyTheUnchangedFile) {
    std::string path = std::filesystem::current_path().string() + "/digest-probe";
    UniqueFd fd = file_of_abc(path);
    ASSERT_TRUE(fd);
    auto d = TransferDigest::of(fd.get(), "ba7816bf");
    ASSERT_TRUE(d);
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_TRUE(d->matches(st));

    // Renamed into place: still the same content.
    std::string moved = path + "-final";
    ASSERT_EQ(::rename(path.c_str(), moved.c_str()), 0);
    ASSERT_EQ(::stat(moved.c_str(), &st), 0);
    EXPECT_TRUE(d->matches(st));

    // Written again (even to the same size): the modification time moves on.
    timespec later[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 1, st.st_mtim.tv_nsec}};
    ASSERT_EQ(::pwrite(fd.get(), "x", 1, 0), 1);
    ASSERT_EQ(::futimens(fd.get(), later), 0);
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_FALSE(d->matches(st));
    auto now = TransferDigest::of(fd.get(), "");
    ASSERT_TRUE(now);
    EXPECT_FALSE(d->same_file_as(*now));  // rewritten during an RRTR: not remembered
    ::unlink(moved.c_str());
}

// RETR and RRTR keep the digest they took only for a file unchanged while
// it was sent, and only of the size they sent.
TEST(TransferDigest, ASentFileIsRememberedOnlyUnchangedAndWhole) {
    std::string path = std::filesystem::current_path().string() + "/digest-sent-probe";
    UniqueFd fd = file_of_abc(path);
    ASSERT_TRUE(fd);
    auto before = TransferDigest::of(fd.get(), "");
    auto kept = TransferDigest::of_unchanged(fd.get(), before, "ba7816bf", 3);
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->sha256, "ba7816bf");
    EXPECT_FALSE(TransferDigest::of_unchanged(fd.get(), before, "ba7816bf", 2));         // grew after its size was taken
    EXPECT_FALSE(TransferDigest::of_unchanged(fd.get(), std::nullopt, "ba7816bf", 3));  // nothing known before
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    timespec later[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 1, st.st_mtim.tv_nsec}};
    ASSERT_EQ(::futimens(fd.get(), later), 0);
    EXPECT_FALSE(TransferDigest::of_unchanged(fd.get(), before, "ba7816bf", 3));  // rewritten meanwhile
    ::unlink(path.c_str());
}
