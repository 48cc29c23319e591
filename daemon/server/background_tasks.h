// Work that must not run on the event loop (password hashing, transfers,
// digests, listings) runs on its own thread; its completion runs back on the
// loop. Threads are joined on the loop as they finish, and all at shutdown.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <thread>

#include "daemon/server/loop_bridge.h"

namespace rftp::daemon {

class BackgroundTasks {
public:
    explicit BackgroundTasks(LoopBridge &bridge) : bridge_(bridge) {}
    ~BackgroundTasks() { join_all(); }

    // Runs work on a new thread, then done on the loop thread. Call on the
    // loop. When no thread can be started (a task limit: systemd's TasksMax,
    // RLIMIT_NPROC), neither runs: refused runs instead, on the loop, and
    // the daemon goes on serving.
    void run(std::function<void()> work, std::function<void()> done, std::function<void()> refused);
    std::size_t running() const { return threads_.size(); }
    void join_all();

private:
    LoopBridge &bridge_;
    uint64_t next_id_ = 0;
    std::map<uint64_t, std::thread> threads_;
};

}  // namespace rftp::daemon
