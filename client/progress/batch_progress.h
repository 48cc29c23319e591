// Progress of a many-file transfer as one aggregate: files done of total,
// bytes (finished files plus the files in flight) and rate. Shown as one
// line on stderr redrawn with '\r', and/or a JSON "progress" event about
// once a second. Session threads register each file's byte counter while it
// moves (Watch), so the line is live even for one huge file among small ones.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "client/progress/progress_reporter.h"
#include "middleware/transfer_progress.h"

namespace rftp::client {

class BatchProgress {
public:
    BatchProgress(ProgressView view, std::size_t files_total);
    ~BatchProgress();  // draws the final line and stops the reporting thread
    BatchProgress(const BatchProgress &) = delete;
    BatchProgress &operator=(const BatchProgress &) = delete;

    // Starts the reporting thread (when the view shows anything).
    void start();
    // One more file is finished, whatever its result.
    void file_finished();

    // While alive, the bytes of this transfer count towards the aggregate.
    class Watch {
    public:
        Watch(BatchProgress *batch, const middleware::TransferProgress &progress);
        ~Watch();
        Watch(const Watch &) = delete;
        Watch &operator=(const Watch &) = delete;

    private:
        BatchProgress *batch_;
        const middleware::TransferProgress &progress_;
    };

private:
    void run();
    void report(bool final_line);

    ProgressView view_;
    std::size_t files_total_;
    std::chrono::steady_clock::time_point started_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::size_t files_done_ = 0;
    uint64_t finished_bytes_ = 0;  // bytes of transfers whose Watch has ended
    std::vector<const middleware::TransferProgress *> active_;
    std::thread thread_;
};

}  // namespace rftp::client
