#include "daemon/server/background_tasks.h"

namespace rftp::daemon {

void BackgroundTasks::run(std::function<void()> work, std::function<void()> done) {
    uint64_t id = next_id_++;
    threads_.emplace(id, std::thread([this, id, work = std::move(work), done = std::move(done)]() mutable {
        work();
        bridge_.post([this, id, done = std::move(done)] {
            auto it = threads_.find(id);
            if (it != threads_.end()) {
                it->second.join();
                threads_.erase(it);
            }
            done();
        });
    }));
}

void BackgroundTasks::join_all() {
    for (auto &[id, t] : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace rftp::daemon
