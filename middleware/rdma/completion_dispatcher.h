// The channel's completion dispatcher and its workers. The dispatcher is the
// one thread that waits on the channel's kernel objects: the completion
// channel (work completions), the rdma_cm event channel (a peer that
// disconnects, a device that goes away) and an eventfd (stop). It polls
// completions in batches and hands each to the completion handler: on a
// worker chosen by the completion's queue pair, so one queue pair's
// completions stay in order, or on itself when there are no workers.
// Handlers never block; they run with no lock of the dispatcher's held.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "middleware/rdma/channel_resources.h"

namespace rftp::middleware::rdma {

class CompletionDispatcher {
public:
    struct Handlers {
        std::function<void(const ibv_wc &)> completion;
        std::function<void(const Error &)> failure;  // the connection is gone, or polling failed
    };

    // Starts the dispatcher and workers threads on res, which must outlive it.
    static Result<std::unique_ptr<CompletionDispatcher>> start(ChannelResources &res, unsigned workers,
                                                               std::string label, Handlers handlers);
    ~CompletionDispatcher();  // stop()
    CompletionDispatcher(const CompletionDispatcher &) = delete;
    CompletionDispatcher &operator=(const CompletionDispatcher &) = delete;

    // Stops and joins every thread; no handler runs after it returns. Idempotent.
    void stop();

    unsigned workers() const { return static_cast<unsigned>(queues_.size()); }

private:
    CompletionDispatcher(ChannelResources &res, std::string label, Handlers handlers);

    void dispatcher_loop();
    bool drain_cq();  // false once polling failed
    void hand_out(const ibv_wc *wcs, int n);
    int drop_stale(ibv_wc *wcs, int n) const;
    void take_cm_events();
    void worker_loop(unsigned index);

    struct WorkerQueue {
        std::mutex mutex;
        std::condition_variable cv;
        std::deque<ibv_wc> items;
        bool stop = false;
    };

    ChannelResources &res_;
    std::string label_;
    Handlers handlers_;
    std::atomic<bool> stopping_{false};
    UniqueFd wake_fd_;  // eventfd: tells the dispatcher to stop
    std::vector<std::unique_ptr<WorkerQueue>> queues_;
    std::vector<std::thread> threads_;
};

}  // namespace rftp::middleware::rdma
