#include "client/progress/progress_reporter.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "common/byte_size.h"
#include "client/progress/json_events.h"

namespace rftp::client {

ProgressReporter::ProgressReporter(ProgressView view, const middleware::TransferProgress &progress, uint64_t offset,
                                   std::optional<uint64_t> total)
    : view_(view), progress_(progress), offset_(offset), total_(total), started_(std::chrono::steady_clock::now()) {
    if (!view_.terminal_line && !view_.json) return;
    // Signals belong to the main flow; this thread must never take them.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ProgressReporter::~ProgressReporter() {
    if (!thread_.joinable()) return;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void ProgressReporter::run() {
    std::unique_lock lock(mutex_);
    auto interval = view_.json ? std::chrono::milliseconds(1000) : std::chrono::milliseconds(500);
    while (!wake_.wait_for(lock, interval, [this] { return stop_; })) report(false);
    report(true);
}

void ProgressReporter::report(bool final_line) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    uint64_t moved = progress_.bytes.load();
    uint64_t done = offset_ + moved;
    double rate = seconds > 0 ? moved / seconds : 0;
    if (view_.json && !final_line) {
        nlohmann::json ev{{"event", "progress"}, {"bytes", done}, {"seconds", seconds}, {"rate", rate}};
        if (total_) ev["total"] = *total_;
        emit_json_event(ev);
    }
    if (view_.terminal_line) {
        std::string line = "\r" + human_bytes(static_cast<double>(done));
        if (total_ && *total_ > 0) {
            char pct[16];
            std::snprintf(pct, sizeof pct, " %3.0f%%", 100.0 * static_cast<double>(done) / static_cast<double>(*total_));
            line += " / " + human_bytes(static_cast<double>(*total_)) + pct;
        }
        line += "  " + human_bytes(rate) + "/s";
        if (total_ && rate > 0 && *total_ > done) {
            uint64_t eta = static_cast<uint64_t>((*total_ - done) / rate);
            char buf[32];
            std::snprintf(buf, sizeof buf, "  ETA %lu:%02lu:%02lu", static_cast<unsigned long>(eta / 3600),
                          static_cast<unsigned long>(eta / 60 % 60), static_cast<unsigned long>(eta % 60));
            line += buf;
        }
        if (!view_.protection.empty()) line += "  [" + view_.protection + "]";
        line += "\033[K";
        if (final_line) line += "\n";
        (void)!::write(STDERR_FILENO, line.data(), line.size());
    }
}

}  // namespace rftp::client
