#include "middleware/rdma/completion_dispatcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <system_error>

#include "common/log.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {
namespace {

constexpr int kBatch = 32;

}  // namespace

Result<std::unique_ptr<CompletionDispatcher>> CompletionDispatcher::start(ChannelResources &res, unsigned workers,
                                                                          std::string label, Handlers handlers) {
    std::unique_ptr<CompletionDispatcher> d(new CompletionDispatcher(res, std::move(label), std::move(handlers)));
    d->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!d->wake_fd_) return fail_errno("eventfd");
    for (unsigned i = 0; i < workers; ++i) d->queues_.push_back(std::make_unique<WorkerQueue>());
    // Out of threads, std::thread throws: that is this channel's failure,
    // not the process's. The destructor stops and joins those started.
    try {
        d->threads_.emplace_back([p = d.get()] { p->dispatcher_loop(); });
        for (unsigned i = 0; i < workers; ++i) d->threads_.emplace_back([p = d.get(), i] { p->worker_loop(i); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("start the RDMA completion threads: ") + e.what(), -e.code().value());
    }
    return d;
}

CompletionDispatcher::CompletionDispatcher(ChannelResources &res, std::string label, Handlers handlers)
    : res_(res), label_(std::move(label)), handlers_(std::move(handlers)) {}

CompletionDispatcher::~CompletionDispatcher() { stop(); }

void CompletionDispatcher::stop() {
    stopping_ = true;
    uint64_t one = 1;
    if (wake_fd_) (void)!::write(wake_fd_.get(), &one, sizeof one);
    for (auto &q : queues_) {
        std::lock_guard lock(q->mutex);
        q->stop = true;
        q->cv.notify_all();
    }
    for (auto &t : threads_)
        if (t.joinable()) t.join();
}

void CompletionDispatcher::dispatcher_loop() {
    ibv_comp_channel *comp = res_.completions.get();
    rdma_event_channel *events = res_.events.get();
    if (!drain_cq()) return;
    while (!stopping_) {
        pollfd fds[3] = {{comp->fd, POLLIN, 0}, {events ? events->fd : -1, POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
        int rc = ::poll(fds, 3, 1000);
        if (stopping_) return;
        if (rc < 0) continue;
        if (fds[0].revents) {
            ibv_cq *cq = nullptr;
            void *ctx = nullptr;
            while (ibv_get_cq_event(comp, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
            ibv_req_notify_cq(res_.cq.get(), 0);
            if (!drain_cq()) return;  // including what arrived before the notification was re-armed
        }
        if (fds[1].revents) take_cm_events();
    }
}

bool CompletionDispatcher::drain_cq() {
    ibv_wc wcs[kBatch];
    for (;;) {
        int n = ibv_poll_cq(res_.cq.get(), kBatch, wcs);
        if (n < 0) {
            // The channel has failed; nothing more will be handed out, and
            // stop() still joins this thread.
            handlers_.failure(Error::msg("ibv_poll_cq failed"));
            return false;
        }
        if (res_.replaced_a_queue_pair) n = drop_stale(wcs, n);
        hand_out(wcs, n);
        if (n < kBatch) return true;
    }
}

// One lock and one wake-up per worker per batch, not per completion.
void CompletionDispatcher::hand_out(const ibv_wc *wcs, int n) {
    if (queues_.empty()) {
        for (int i = 0; i < n; ++i) handlers_.completion(wcs[i]);
        return;
    }
    for (std::size_t w = 0; w < queues_.size(); ++w) {
        WorkerQueue &q = *queues_[w];
        bool any = false;
        std::lock_guard lock(q.mutex);
        for (int i = 0; i < n; ++i)
            if (wr_qp(wcs[i].wr_id) % queues_.size() == w) q.items.push_back(wcs[i]), any = true;
        if (any) q.cv.notify_one();
    }
}

// A queue pair whose connect failed on a taken port (cm_setup.cpp) was
// destroyed and made anew; its posted receives may come back flushed, by a
// queue pair number no longer in the channel. Those are not this channel's
// failures. Keeps the rest in order; returns how many.
int CompletionDispatcher::drop_stale(ibv_wc *wcs, int n) const {
    int kept = 0;
    for (int i = 0; i < n; ++i) {
        const unsigned qp = wr_qp(wcs[i].wr_id);
        const rdma_cm_id *id = qp < res_.connections.size() ? res_.connections[qp].get() : nullptr;
        if (id && id->qp && id->qp->qp_num == wcs[i].qp_num) wcs[kept++] = wcs[i];
        else if (log::enabled(log::Level::debug))
            log::debug(label_ + " event=rdma_stale_completion queue_pair=" + std::to_string(qp) + " qp_num=" +
                       std::to_string(wcs[i].qp_num) + " status=" + ibv_wc_status_str(wcs[i].status));
    }
    return kept;
}

void CompletionDispatcher::take_cm_events() {
    rdma_cm_event *raw = nullptr;
    while (rdma_get_cm_event(res_.events.get(), &raw) == 0) {
        CmEvent ev(raw);
        auto type = ev->event;
        if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_DEVICE_REMOVAL)
            handlers_.failure(Error{-ECONNRESET, type == RDMA_CM_EVENT_DEVICE_REMOVAL
                                                     ? "the RDMA device went away"
                                                     : "the peer closed the RDMA connection"});
    }
}

void CompletionDispatcher::worker_loop(unsigned index) {
    WorkerQueue &q = *queues_[index];
    std::deque<ibv_wc> batch;
    for (;;) {
        {
            std::unique_lock lock(q.mutex);
            q.cv.wait(lock, [&] { return !q.items.empty() || q.stop; });
            if (q.items.empty()) return;
            batch.swap(q.items);  // everything queued, under one lock
        }
        for (const ibv_wc &wc : batch) handlers_.completion(wc);
        batch.clear();
    }
}

}  // namespace rftp::middleware::rdma
