// The one way other threads talk to the event loop. libuv is not thread-safe
// except for uv_async_send, which coalesces wake-ups; so work is queued here
// under a mutex and the loop drains the whole queue on each wake-up.
#pragma once

#include <uv.h>

#include <deque>
#include <functional>
#include <mutex>

namespace rftp::daemon {

class LoopBridge {
public:
    explicit LoopBridge(uv_loop_t *loop);
    LoopBridge(const LoopBridge &) = delete;
    LoopBridge &operator=(const LoopBridge &) = delete;

    // Runs fn on the loop thread, soon. Safe from any thread. Dropped after close().
    void post(std::function<void()> fn);
    // Stops keeping the loop alive; call once, on the loop thread, at shutdown.
    void close();

private:
    static void on_async(uv_async_t *handle);

    uv_async_t async_{};
    std::mutex mutex_;
    std::deque<std::function<void()>> queue_;
    bool closed_ = false;  // after close(), posts are dropped: the handle is gone
};

}  // namespace rftp::daemon
