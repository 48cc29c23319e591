// Which exit code rftp gives for the error that ended its side of a
// transfer: its own disk (6, fix it here), a changed file (7, send it
// again), or the transfer (8, resume with -c).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "client/commands/transfer_steps.h"
#include "client/exit_codes.h"
#include "common/result.h"

using rftp::Error;
using rftp::client::ExitCode;
using rftp::client::exit_for_data_error;
using rftp::client::read_local_sha256;
using rftp::client::resumable_failure;

namespace {

TEST(DataErrorExitCode, ThisHostsDiskIsALocalFileError) {
    for (int err : {ENOSPC, EDQUOT, EFBIG, EIO, EROFS, ESTALE, EBADF, EISDIR})
        EXPECT_EQ(exit_for_data_error(Error{-err, "x"}), ExitCode::local_file) << err;
}

TEST(DataErrorExitCode, AFileThatChangedIsAVerificationFailure) {
    EXPECT_EQ(exit_for_data_error(rftp::file_ended_early(10)), ExitCode::verification);
}

// --verify's local side read again: a file shorter than what was sent is
// not the file that moved (7); one that cannot be read is this disk's (6).
TEST(DataErrorExitCode, VerifyOfAFileThatEndedEarlyIsAVerificationFailure) {
    FILE *file = std::tmpfile();
    ASSERT_NE(file, nullptr);
    ASSERT_EQ(std::fwrite("abc", 1, 3, file), 3u);
    ASSERT_EQ(std::fflush(file), 0);
    EXPECT_TRUE(read_local_sha256(fileno(file), 3, "f").has_value());
    auto shorter = read_local_sha256(fileno(file), 4, "f");
    ASSERT_FALSE(shorter.has_value());
    EXPECT_EQ(shorter.error().exit, ExitCode::verification);
    std::fclose(file);
}

TEST(DataErrorExitCode, VerifyOfAFileThatCannotBeReadIsALocalFileError) {
    int dir = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);  // read() of it: EISDIR
    ASSERT_GE(dir, 0);
    auto unreadable = read_local_sha256(dir, 10, "/");
    ::close(dir);
    ASSERT_FALSE(unreadable.has_value());
    EXPECT_EQ(unreadable.error().exit, ExitCode::local_file);
}

TEST(DataErrorExitCode, ThePeersAbortABrokenLinkOrABadBlockAreTheTransfers) {
    // A peer's abort reaches the RDMA channel as ECONNABORTED, a failed work
    // request as ECONNRESET, a vanished device as ENODEV, and a block that
    // failed its CRC32C on the way as EBADMSG: none is this host's disk.
    for (int err : {ECONNABORTED, ECONNRESET, ENODEV, EBADMSG, EPIPE, ETIMEDOUT})
        EXPECT_EQ(exit_for_data_error(Error{-err, "x"}), ExitCode::transfer) << err;
}

TEST(DataErrorExitCode, OnlyATransferFailureOrAnInterruptIsResumable) {
    EXPECT_TRUE(resumable_failure(ExitCode::transfer, 0));
    EXPECT_TRUE(resumable_failure(ExitCode::interrupted, 0));
    EXPECT_TRUE(resumable_failure(ExitCode::connection, 1));
    EXPECT_FALSE(resumable_failure(ExitCode::connection, 0));
    EXPECT_FALSE(resumable_failure(ExitCode::local_file, 100));
    EXPECT_FALSE(resumable_failure(ExitCode::verification, 100));
}

}  // namespace
