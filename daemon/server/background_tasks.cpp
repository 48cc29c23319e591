#include "daemon/server/background_tasks.h"

#include <string>
#include <system_error>

#include "common/log.h"

namespace rftp::daemon {

void BackgroundTasks::run(std::function<void()> work, std::function<void()> done, std::function<void()> refused) {
    uint64_t id = next_id_++;
    std::thread thread;
    try {
        thread = std::thread([this, id, work = std::move(work), done = std::move(done)]() mutable {
            work();
            bridge_.post([this, id, done = std::move(done)] {
                auto it = threads_.find(id);
                if (it != threads_.end()) {
                    it->second.join();
                    threads_.erase(it);
                }
                done();
            });
        });
    } catch (const std::system_error &e) {
        log::error(std::string("event=thread_refused reason=") + log::quote(e.what()) +
                   " running_tasks=" + std::to_string(threads_.size()));
        refused();
        return;
    }
    threads_.emplace(id, std::move(thread));
}

void BackgroundTasks::join_all() {
    for (auto &[id, t] : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace rftp::daemon
