// Which reply rftpd gives for the error that ended a transfer: the code
// tells the client (and the operator reading the log) whose part failed.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "common/result.h"
#include "daemon/data/transfer_job.h"

using rftp::Error;
using rftp::ErrorKind;
using rftp::daemon::failed_outcome;
using rftp::daemon::open_failed_outcome;

namespace {

bool starts_with(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

TEST(TransferFailureReply, ThisHostsDiskFailingIsALocalError451NotABrokenConnection) {
    for (int err : {EIO, EROFS, ESTALE}) {
        auto out = failed_outcome(Error{-err, "read at offset 8388608: it failed"}, false, 100);
        EXPECT_EQ(out.code, 451) << err;
        EXPECT_TRUE(starts_with(out.text, "Requested action aborted: local error in processing: read at offset 8388608"))
            << out.text;
        EXPECT_EQ(out.result, "failed");
        EXPECT_EQ(out.bytes, 100u);
    }
}

TEST(TransferFailureReply, AFileThatChangedWhileSentSaysSoNotThatTheDiskFailed) {
    auto out = failed_outcome(rftp::file_ended_early(4096), false, 4096);
    EXPECT_EQ(out.code, 451);
    EXPECT_TRUE(starts_with(out.text, "Requested action aborted: the file changed while it was being sent: the file ended at byte 4096"))
        << out.text;
}

TEST(TransferFailureReply, NoRoomIs452AndTooLargeIs552) {
    EXPECT_EQ(failed_outcome(Error{-ENOSPC, "write"}, false, 0).code, 452);
    EXPECT_EQ(failed_outcome(Error{-EDQUOT, "write"}, false, 0).code, 452);
    EXPECT_TRUE(starts_with(failed_outcome(Error{-ENOSPC, "write"}, false, 0).text, "Insufficient storage space: "));
    EXPECT_EQ(failed_outcome(Error{-EFBIG, "write"}, false, 0).code, 552);
}

TEST(TransferFailureReply, AMissingThreadIsA451ToTryAgainLater) {
    auto out = failed_outcome(Error{-EAGAIN, "no thread for the disk engine"}, false, 0);
    EXPECT_EQ(out.code, 451);
    EXPECT_NE(out.text.find("try again later"), std::string::npos) << out.text;
}

TEST(TransferFailureReply, AnUploadInProgressIsFileBusyNotAMissingThread) {
    auto out = failed_outcome(Error{-EBUSY, "another session is uploading this file", ErrorKind::busy}, false, 0);
    EXPECT_EQ(out.code, 450) << out.text;
    EXPECT_EQ(out.text, "File busy: another session is uploading this file.");
    // The system's own EAGAIN stays what it was: no thread just now.
    auto again = failed_outcome(Error{-EAGAIN, "no thread"}, false, 0);
    EXPECT_EQ(again.code, 451);
    EXPECT_NE(again.text.find("try again later"), std::string::npos) << again.text;
}

TEST(TransferFailureReply, ReservedNamesAndBadOffsetsKeepTheirRepliesWhateverTheirErrno) {
    EXPECT_EQ(failed_outcome(Error{-EINVAL, "rftpd's own name", ErrorKind::reserved_name}, false, 0).code, 553);
    EXPECT_EQ(failed_outcome(Error{-ERANGE, "past the end", ErrorKind::bad_offset}, false, 0).code, 554);
    // Context added on the way up keeps the kind.
    auto busy = Error{-EBUSY, "uploading", ErrorKind::busy}.with_context("STOR x");
    EXPECT_EQ(failed_outcome(busy, false, 0).code, 450);
}

TEST(TransferFailureReply, TheNetworksFailuresAre426) {
    for (int err : {ECONNRESET, ECONNABORTED, ENODEV, EPIPE, EBADMSG}) {
        auto out = failed_outcome(Error{-err, "stream 2"}, false, 0);
        EXPECT_EQ(out.code, 426) << err;
        EXPECT_TRUE(starts_with(out.text, "Connection closed; transfer aborted: stream 2")) << out.text;
    }
    auto stalled = failed_outcome(Error{-ETIMEDOUT, "no byte for 60 s"}, false, 0);
    EXPECT_EQ(stalled.code, 426);
    EXPECT_TRUE(starts_with(stalled.text, "Data connection stalled")) << stalled.text;
}

TEST(TransferFailureReply, AnAbortedTransferIs426WhateverEndedIt) {
    for (int code : {-EIO, -ENOSPC, rftp::kFileChanged, -ECONNRESET}) {
        auto out = failed_outcome(Error{code, "x"}, true, 7);
        EXPECT_EQ(out.code, 426) << code;
        EXPECT_EQ(out.text, "Transfer aborted.");
        EXPECT_EQ(out.result, "aborted");
        EXPECT_EQ(out.bytes, 7u);
    }
}

TEST(TransferFailureReply, DataConnectionsThatNeverOpenedAre425UnlessAborted) {
    auto out = open_failed_outcome(Error{-ETIMEDOUT, "no connection within 60 s"}, false);
    EXPECT_EQ(out.code, 425);
    EXPECT_EQ(out.text, "Can't open data connection: no connection within 60 s.");
    EXPECT_EQ(open_failed_outcome(Error{-ETIMEDOUT, "x"}, true).code, 426);
}

}  // namespace
