// A libuv loop on the test's thread with a bridge into it, for the units
// that live on the daemon's loop (BackgroundTasks, LoginGate).
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <thread>

#include "daemon/server/loop_bridge.h"

namespace rftp::daemon::testing {

struct UvTestLoop {
    uv_loop_t loop{};
    std::unique_ptr<LoopBridge> bridge;
    UvTestLoop() {
        uv_loop_init(&loop);
        bridge = std::make_unique<LoopBridge>(&loop);
    }
    ~UvTestLoop() {
        bridge->close();
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
    }
    // Runs the loop until pred holds, for at most limit.
    template <class Pred>
    bool until(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (!pred()) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            uv_run(&loop, UV_RUN_NOWAIT);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        return true;
    }
};

}  // namespace rftp::daemon::testing
