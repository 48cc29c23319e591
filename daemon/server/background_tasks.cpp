#include "daemon/server/background_tasks.h"

#include <exception>
#include <string>
#include <system_error>
#include <utility>

#include "common/log.h"

namespace rftp::daemon {

void BackgroundTasks::run(std::string what, std::function<void()> work, std::function<void()> done,
                          std::function<void()> refused) {
    std::unique_lock lock(mutex_);
    if (stopping_) {
        lock.unlock();
        return refused();
    }
    // Counted until done (or, for a work that threw, refused) has run on
    // the loop (finished_one).
    const uint64_t task = next_task_++;
    auto counted = [this, task](std::function<void()> fn) {
        return [this, task, fn = std::move(fn)] {
            fn();
            finished_one(task);
        };
    };
    unfinished_.emplace(task, std::move(what));
    queue_.push_back({std::move(work), counted(std::move(done)), counted(refused)});
    if (queue_.size() <= idle_) {
        wake_.notify_one();
        return;
    }
    // Every waiting worker has a task already: one more, for this one.
    // It starts under the lock, so none can take the task meanwhile.
    uint64_t id = next_id_++;
    try {
        threads_.emplace(id, std::thread([this, id] { serve(id); }));
    } catch (const std::system_error &e) {
        queue_.pop_back();
        unfinished_.erase(task);
        const std::size_t busy = threads_.size() - idle_;
        lock.unlock();
        log::error(std::string("event=thread_refused reason=") + log::quote(e.what()) +
                   " running_tasks=" + std::to_string(busy));
        refused();
    }
}

void BackgroundTasks::serve(uint64_t id) {
    std::unique_lock lock(mutex_);
    ++idle_;
    for (;;) {
        bool have = wake_.wait_for(lock, idle_for_, [this] { return stopping_ || !queue_.empty(); });
        --idle_;
        if (!have || queue_.empty()) break;  // idle too long, or stopping with nothing left
        Task task = std::move(queue_.front());
        queue_.pop_front();
        lock.unlock();
        std::function<void()> work = std::move(task.work), done = std::move(task.done);
        if (!completed(work)) done = std::move(task.refused);
        // What the work held (an RDMA channel, a file) goes here, before done
        // runs and not under the lock, as when its thread ended with it.
        work = nullptr;
        // Counted as free before done runs: the session's next command (a
        // transfer after its login) must find this worker, not ask for a
        // thread of its own, which at the thread limit it would not get.
        lock.lock();
        ++idle_;
        lock.unlock();
        bridge_.post(std::move(done));
        lock.lock();
    }
    // The loop joins what ended (join_all, at shutdown, joins the rest).
    if (!stopping_) bridge_.post([this, id] { reap(id); });
}

bool BackgroundTasks::completed(const std::function<void()> &work) {
    // A thread function that throws ends the process: every session, for one
    // command's failure. The session whose work it was is told instead.
    // Saying why allocates, and memory may be what ran out: then it goes unsaid.
    auto say = [](const char *why) noexcept {
        try {
            log::error(std::string("event=task_failed reason=") + log::quote(why));
        } catch (...) {
        }
    };
    try {
        work();
        return true;
    } catch (const std::exception &e) {
        say(e.what());
    } catch (...) {
        say("an exception of unknown type");
    }
    return false;
}

void BackgroundTasks::finished_one(uint64_t task) {
    unfinished_.erase(task);
    if (unfinished_.empty() && all_done_) std::exchange(all_done_, nullptr)();
}

std::vector<std::string> BackgroundTasks::unfinished() const {
    std::vector<std::string> what;
    for (const auto &[task, text] : unfinished_) what.push_back(text);
    return what;
}

void BackgroundTasks::when_all_done(std::function<void()> fn) {
    if (unfinished_.empty()) return fn();
    all_done_ = std::move(fn);
}

void BackgroundTasks::reap(uint64_t id) {
    auto it = threads_.find(id);
    if (it == threads_.end()) return;
    it->second.join();  // not under the lock: the worker may still be leaving it
    std::lock_guard lock(mutex_);
    threads_.erase(it);
}

std::size_t BackgroundTasks::running() const {
    std::lock_guard lock(mutex_);
    return threads_.size() - idle_;
}

std::size_t BackgroundTasks::workers() const {
    std::lock_guard lock(mutex_);
    return threads_.size();
}

void BackgroundTasks::join_all() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto &[id, t] : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

}  // namespace rftp::daemon
