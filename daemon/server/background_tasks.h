// Work that must not run on the event loop (password hashing, transfers,
// digests, listings) runs on a worker thread; its completion runs back on the
// loop. Workers are kept for a while after their task and take the next one:
// with many small files, a thread started and ended for every file cost
// rftpd a tenth of its CPU (docs/benchmarks.md). A task never waits for
// another: with no worker free, a new one starts.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/server/loop_bridge.h"

namespace rftp::daemon {

class BackgroundTasks {
public:
    // idle_for: how long a worker with nothing to do waits for more before it ends.
    explicit BackgroundTasks(LoopBridge &bridge, std::chrono::milliseconds idle_for = std::chrono::seconds(5))
        : bridge_(bridge), idle_for_(idle_for) {}
    ~BackgroundTasks() { join_all(); }
    BackgroundTasks(const BackgroundTasks &) = delete;
    BackgroundTasks &operator=(const BackgroundTasks &) = delete;

    // Runs work on a worker thread, then done on the loop thread. Call on
    // the loop. When no worker is free and no thread can be started (a task
    // limit: systemd's TasksMax, RLIMIT_NPROC), neither runs: refused runs
    // instead, on the loop, and the daemon goes on serving. So does a work
    // that throws (std::bad_alloc): it is logged, and refused runs in place
    // of done, which would take a result the work never finished. what
    // names the work for the log, should it hold up the daemon's stop
    // ("session=3 peer=... command=DELE argument=...").
    void run(std::string what, std::function<void()> work, std::function<void()> done, std::function<void()> refused);
    std::size_t running() const;  // tasks under way
    // What run() was told of each task whose done has not run yet, oldest
    // first. Call on the loop.
    std::vector<std::string> unfinished() const;
    std::size_t workers() const;  // threads, busy or waiting for a task
    // Runs fn on the loop once every task accepted so far has finished and
    // its done has run (at once if none is left). Call on the loop, at
    // shutdown: a transfer cut short by it still logs how it ended.
    void when_all_done(std::function<void()> fn);
    // Waits for the tasks under way, then ends every worker. Call on the
    // loop thread, at shutdown: later tasks are refused.
    void join_all();

private:
    struct Task {
        std::function<void()> work, done, refused;
    };
    void serve(uint64_t id);
    static bool completed(const std::function<void()> &work);  // false: it threw (logged)
    void reap(uint64_t id);

    LoopBridge &bridge_;
    const std::chrono::milliseconds idle_for_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Task> queue_;
    std::size_t idle_ = 0;  // workers waiting for a task
    bool stopping_ = false;
    uint64_t next_id_ = 0;
    std::map<uint64_t, std::thread> threads_;  // every worker not yet joined; changed on the loop thread only
    // Loop thread only: tasks accepted whose done has not run yet (by the
    // order they came in: what each is), and what to run when none is left.
    std::map<uint64_t, std::string> unfinished_;
    uint64_t next_task_ = 0;
    std::function<void()> all_done_;
    void finished_one(uint64_t task);
};

}  // namespace rftp::daemon
