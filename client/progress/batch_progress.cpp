#include "client/progress/batch_progress.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "client/progress/json_events.h"
#include "common/byte_size.h"

namespace rftp::client {

BatchProgress::BatchProgress(ProgressView view, std::size_t files_total)
    : view_(view), files_total_(files_total), started_(std::chrono::steady_clock::now()) {}

void BatchProgress::start() {
    if ((!view_.terminal_line && !view_.json) || thread_.joinable()) return;
    // Signals belong to the session threads; this one must never take them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

BatchProgress::~BatchProgress() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void BatchProgress::file_finished() {
    std::lock_guard lock(mutex_);
    ++files_done_;
}

BatchProgress::Watch::Watch(BatchProgress *batch, const middleware::TransferProgress &progress)
    : batch_(batch), progress_(progress) {
    if (!batch_) return;
    std::lock_guard lock(batch_->mutex_);
    batch_->active_.push_back(&progress_);
}

BatchProgress::Watch::~Watch() {
    if (!batch_) return;
    std::lock_guard lock(batch_->mutex_);
    // Moved from "in flight" to "finished" in one step: never counted twice or not at all.
    batch_->finished_bytes_ += progress_.bytes.load();
    std::erase(batch_->active_, &progress_);
}

void BatchProgress::run() {
    std::unique_lock lock(mutex_);
    auto interval = view_.json ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(500);
    while (!wake_.wait_for(lock, interval, [this] { return stop_; })) report(false);
    report(true);
}

// Called with mutex_ held.
void BatchProgress::report(bool final_line) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    uint64_t bytes = finished_bytes_;
    for (const auto *p : active_) bytes += p->bytes.load();
    double rate = seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
    if (view_.json && !final_line) {
        emit_json_event({{"event", "progress"}, {"files_done", files_done_}, {"files_total", files_total_},
                         {"bytes", bytes}, {"seconds", seconds}, {"rate", rate}});
    }
    if (view_.terminal_line) {
        char counts[64];
        std::snprintf(counts, sizeof counts, "\r%zu/%zu files  ", files_done_, files_total_);
        std::string line = counts + human_bytes(static_cast<double>(bytes)) + "  " + human_bytes(rate) + "/s\033[K";
        if (final_line) line += "\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
}

}  // namespace rftp::client
