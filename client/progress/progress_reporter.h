// Watches a transfer's byte counter from its own thread and reports it:
// a one-line display on stderr redrawn with '\r' (bytes, rate, ETA), and/or
// a JSON "progress" event about once a second. Stops when destroyed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "middleware/transfer_progress.h"

namespace rftp::client {

struct ProgressView {
    bool terminal_line = false;
    bool json = false;
    std::string protection;  // shown at the end of the line: "TLS" when the data is under TLS
};

class ProgressReporter {
public:
    // bytes counts what moves in this run; offset is what a resume skipped,
    // so the display shows offset+bytes of total.
    ProgressReporter(ProgressView view, const middleware::TransferProgress &progress, uint64_t offset,
                     std::optional<uint64_t> total);
    ~ProgressReporter();
    ProgressReporter(const ProgressReporter &) = delete;
    ProgressReporter &operator=(const ProgressReporter &) = delete;

private:
    void run();
    void report(bool final_line);

    ProgressView view_;
    const middleware::TransferProgress &progress_;
    uint64_t offset_;
    std::optional<uint64_t> total_;
    std::chrono::steady_clock::time_point started_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::thread thread_;
};


}  // namespace rftp::client
