#include "daemon/server/loop_bridge.h"

namespace rftp::daemon {

LoopBridge::LoopBridge(uv_loop_t *loop) {
    uv_async_init(loop, &async_, &LoopBridge::on_async);
    async_.data = this;
}

void LoopBridge::post(std::function<void()> fn) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    queue_.push_back(std::move(fn));
    // Sent under the lock so close() cannot slip in between.
    uv_async_send(&async_);
}

void LoopBridge::close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    if (!uv_is_closing(reinterpret_cast<uv_handle_t *>(&async_)))
        uv_close(reinterpret_cast<uv_handle_t *>(&async_), nullptr);
}

void LoopBridge::on_async(uv_async_t *handle) {
    auto *self = static_cast<LoopBridge *>(handle->data);
    std::deque<std::function<void()>> ready;
    {
        std::lock_guard lock(self->mutex_);
        ready.swap(self->queue_);
    }
    for (auto &fn : ready) fn();
}

}  // namespace rftp::daemon
