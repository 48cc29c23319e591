// How the thread that moves an RDMA file waits for it
// (middleware/rdma/file_wait.h), and the channel's first failure
// (middleware/rdma/failure_latch.h): an abort, a stall and a stopping
// channel each end the wait with their own error; the first failure wins.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "middleware/rdma/failure_latch.h"
#include "middleware/rdma/file_wait.h"

using rftp::Error;
using rftp::middleware::TransferProgress;
using rftp::middleware::rdma::FailureLatch;
using rftp::middleware::rdma::wait_until_finished;

namespace {

struct Ended {
    std::optional<Error> error;
    bool tell_peer = false;
};

// Waits with the given stall timeout until finished or failed.
Ended wait_for(TransferProgress &progress, unsigned stall_s, const std::function<bool()> &finished,
               const std::function<bool()> &stopping = [] { return false; }) {
    std::mutex m;
    std::condition_variable cv;
    Ended ended;
    std::unique_lock lock(m);
    wait_until_finished(
        lock, cv, stall_s, progress, [&] { return finished() || ended.error.has_value(); }, [] { return false; },
        stopping, [&](const Error &e, bool tell_peer) { ended = {e, tell_peer}; });
    return ended;
}

TEST(FileWait, AnAbortEndsTheFileAndTellsThePeer) {
    TransferProgress progress;
    progress.abort = true;
    Ended e = wait_for(progress, 60, [] { return false; });
    ASSERT_TRUE(e.error);
    EXPECT_EQ(e.error->code, -ECANCELED);
    EXPECT_TRUE(e.tell_peer);
}

TEST(FileWait, AStoppingChannelEndsTheFileWithoutTellingThePeer) {
    TransferProgress progress;
    Ended e = wait_for(progress, 60, [] { return false; }, [] { return true; });
    ASSERT_TRUE(e.error);
    EXPECT_EQ(e.error->code, -ECANCELED);
    EXPECT_FALSE(e.tell_peer);
}

TEST(FileWait, NoByteForTheStallTimeoutIsAStall) {
    TransferProgress progress;
    Ended e = wait_for(progress, 1, [] { return false; });
    ASSERT_TRUE(e.error);
    EXPECT_EQ(e.error->code, -ETIMEDOUT);
    EXPECT_TRUE(e.tell_peer);
}

TEST(FileWait, BytesMovingKeepTheWaitGoingPastTheStallTimeout) {
    TransferProgress progress;
    std::atomic<bool> done{false};
    std::thread mover([&] {
        for (int i = 0; i < 25; ++i) {  // 2.5 s of progress against a 1 s stall timeout
            progress.bytes.fetch_add(1);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        done = true;
    });
    Ended e = wait_for(progress, 1, [&] { return done.load(); });
    mover.join();
    EXPECT_FALSE(e.error) << e.error->message;
}

TEST(FailureLatch, TheFirstFailureWinsAcrossThreads) {
    FailureLatch latch;
    EXPECT_FALSE(latch.tripped());
    std::atomic<int> first{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
            if (latch.trip(Error{-EIO, "failure " + std::to_string(i)})) ++first;
        });
    for (auto &t : threads) t.join();
    EXPECT_EQ(first.load(), 1);
    ASSERT_TRUE(latch.tripped());
    EXPECT_FALSE(latch.trip(Error{-EIO, "later"}));
    EXPECT_NE(latch.error()->message, "later");
}

}  // namespace
