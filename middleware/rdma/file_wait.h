// How the thread that moves a file waits for it (send_file, receive_file):
// on the pipeline's condition variable, waking at least every 200 ms to end
// the file on an abort (Ctrl-C, ABOR), the channel stopping, or a stall (no
// byte for stall_timeout_s).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "common/result.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware::rdma {

// finished(): the file is done. step(): work for this thread before it
// waits again (true if it did some, which counts as progress).
// stopping(): the channel is going away. fail(error, tell_peer): ends the file.
template <class Finished, class Step, class Stopping, class Fail>
void wait_until_finished(std::unique_lock<std::mutex> &lock, std::condition_variable &cv, unsigned stall_timeout_s,
                         TransferProgress &progress, Finished finished, Step step, Stopping stopping, Fail fail) {
    using Clock = std::chrono::steady_clock;
    auto last_change = Clock::now();
    uint64_t last_bytes = progress.bytes.load();
    while (!finished()) {
        if (step()) {
            last_change = Clock::now();
            continue;
        }
        cv.wait_for(lock, std::chrono::milliseconds(200));
        if (finished()) break;
        if (stopping()) {
            fail(Error{-ECANCELED, "the channel is shutting down"}, false);
            break;
        }
        if (progress.abort.load()) {
            fail(Error{-ECANCELED, "transfer aborted"}, true);
            break;
        }
        uint64_t now_bytes = progress.bytes.load();
        if (now_bytes != last_bytes) {
            last_bytes = now_bytes;
            last_change = Clock::now();
        } else if (Clock::now() - last_change > std::chrono::seconds(stall_timeout_s)) {
            fail(Error{-ETIMEDOUT, "no RDMA progress for " + std::to_string(stall_timeout_s) + " s"}, true);
            break;
        }
    }
}

}  // namespace rftp::middleware::rdma
