// Channel lifecycle, the completion dispatcher and its workers, the control
// message link with its credits, failure handling and the monitor. The
// source side is in channel_source.cpp, the sink side in channel_sink.cpp.
#include "middleware/rdma/channel.h"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <tuple>

#include "common/log.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/verbs_error.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {
namespace {

// A control message's header fields, for debug lines.
std::string message_fields(const wire::RdmaMessage &m) {
    return std::string("type=") + wire::to_string(m.type) + " file=" + std::to_string(m.file_id) +
           " credits=" + std::to_string(m.credits) + " grants=" + std::to_string(m.grant_count);
}

}  // namespace

const char *to_string(NoticeMode m) {
    switch (m) {
        case NoticeMode::unknown: return "none";
        case NoticeMode::write_with_imm: return "write_with_imm";
        case NoticeMode::write_then_send: return "write_then_send";
    }
    return "?";
}

Result<std::unique_ptr<Channel>> Channel::start(ChannelResources resources, std::string label,
                                                std::function<void(const Error &)> on_failure) {
    std::unique_ptr<Channel> c(new Channel(std::move(resources), std::move(label), std::move(on_failure)));
    c->wake_fd_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!c->wake_fd_) return fail_errno("eventfd");
    const unsigned workers = c->res_.params.workers;
    const disk::DiskOptions &d = c->res_.params.disk;
    auto buffers = c->pool_buffers();
    for (auto [threads, count, role] : {std::tuple{&c->readers_, d.readers, " reader"},
                                        std::tuple{&c->writers_, d.writers, " writer"}})
        for (unsigned i = 0; i < std::max(1u, count); ++i) {
            auto io = disk::BlockIo::create(buffers, d.queue_depth, c->label_ + role);
            if (!io) return fail(io.error().with_context("disk engine"));
            threads->push_back(DiskThread{std::move(*io)});
        }
    for (unsigned i = 0; i < workers; ++i) c->worker_queues_.push_back(std::make_unique<WorkerQueue>());
    // Out of threads, std::thread throws: that is this channel's failure,
    // not the process's. The destructor stops and joins those started.
    try {
        c->threads_.emplace_back([p = c.get()] { p->dispatcher_loop(); });
        for (unsigned i = 0; i < workers; ++i) c->threads_.emplace_back([p = c.get(), i] { p->worker_loop(i); });
        for (unsigned i = 0; i < c->readers_.size(); ++i)
            c->threads_.emplace_back([p = c.get(), i] { p->reader_loop(i); });
        c->threads_.emplace_back([p = c.get()] { p->sender_loop(); });
        for (unsigned i = 0; i < c->writers_.size(); ++i)
            c->threads_.emplace_back([p = c.get(), i] { p->writer_loop(i); });
        c->threads_.emplace_back([p = c.get()] { p->monitor_loop(); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("start the RDMA channel's threads: ") + e.what(), -e.code().value());
    }
    return c;
}

Channel::Channel(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure)
    : res_(std::move(resources)), label_(std::move(label)), on_failure_(std::move(on_failure)) {
    for (uint32_t i = kControlDepth; i > 0; --i) free_send_slots_.push_back(i - 1);
    in_flight_.assign(res_.params.queue_pairs(), 0);
    zeroed_.assign(res_.params.blocks, 0);
}

Channel::~Channel() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        unusable_ = true;
        wake_disk_threads_locked(readers_, reader_cv_);
        wake_disk_threads_locked(writers_, writer_cv_);
    }
    changed_.notify_all();
    sender_cv_.notify_all();
    monitor_cv_.notify_all();
    for (auto &q : worker_queues_) {
        std::lock_guard lock(q->mutex);
        stop_workers_ = true;
        q->cv.notify_all();
    }
    uint64_t one = 1;
    if (wake_fd_) (void)!::write(wake_fd_.get(), &one, sizeof one);
    for (auto &t : threads_)
        if (t.joinable()) t.join();
    // Tell the peer at once rather than let it find out from a timeout.
    for (auto &c : res_.connections)
        if (c) rdma_disconnect(c.get());
    // res_ now releases the queue pairs, registrations, queue and domain, in reverse.
}

bool Channel::usable() const { return !unusable_.load(); }

std::vector<iovec> Channel::pool_buffers() const {
    std::vector<iovec> v(res_.params.blocks);
    for (uint32_t i = 0; i < res_.params.blocks; ++i) v[i] = {res_.block(i), res_.params.block_stride()};
    return v;
}

void Channel::wake_disk_threads_locked(std::vector<DiskThread> &threads, std::condition_variable &cv) {
    cv.notify_all();
    for (DiskThread &t : threads)
        if (std::exchange(t.in_ring_wait, false)) t.io->wake();
}

// Says how much of a file went direct and what went buffered (and why):
// the fallback is automatic, so this is where an operator can see it.
void Channel::log_disk_summary_locked(const char *role, uint32_t file_id, const disk::DiskFile *file) const {
    if (!file) return;
    log::debug(label_ + " event=disk_io role=" + role + " file=" + std::to_string(file_id) + " " + file->summary());
}

void Channel::hash_in_order(std::unique_lock<std::mutex> &lock, OrderedDigest &digest, bool source,
                            const PieceStep &after_hash, const PieceStep &done) {
    const uint32_t id = source ? source_->id : sink_->id;
    auto current = [&] {
        return source ? source_ && source_->id == id && !source_->done : sink_ && sink_->id == id && !sink_->done;
    };
    for (;;) {
        std::vector<OrderedDigest::Piece> claimed = digest.claim();
        if (claimed.empty()) return;
        lock.unlock();
        for (const auto &p : claimed) {
            digest.update(res_.block(p.block), p.length);
            if (after_hash) after_hash(p);
        }
        lock.lock();
        digest.release(claimed);
        if (!current()) return;
        for (const auto &p : claimed) done(p);
    }
}

ChannelStats Channel::stats() const {
    ChannelStats s;
    s.device = res_.device() ? ibv_get_device_name(res_.device()->device) : "";
    s.queue_pairs = res_.params.queue_pairs();
    s.pinned_bytes = res_.pool.size() + res_.messages.size();
    s.pages = res_.pool.pages();
    s.workers = static_cast<unsigned>(worker_queues_.size());
    return s;
}

void Channel::abort(const std::string &why) {
    std::lock_guard lock(mutex_);
    fail_locked(Error{-ECANCELED, why}, true);
}

// ---- failure ---------------------------------------------------------------

void Channel::fail_locked(const Error &e, bool tell_peer) {
    if (failed_ || stopping_) return;
    failed_ = e;
    unusable_ = true;
    if (tell_peer) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::abort;
        m.file_id = source_ ? source_->id : sink_ ? sink_->id : 0;
        m.status = wire::abort_status(e.code);
        m.text = e.message;
        send_control_locked(m);
    }
    if (source_ && !source_->done) {
        source_->error = e;
        source_->done = true;
    }
    if (sink_ && !sink_->done) {
        sink_->error = e;
        sink_->done = true;
    }
    changed_.notify_all();
    reader_cv_.notify_all();
    sender_cv_.notify_all();
    writer_cv_.notify_all();
    if (on_failure_ && !failure_reported_) {
        failure_reported_ = true;
        on_failure_(e);
    }
}

// ---- the control link --------------------------------------------------------

void Channel::send_control_locked(wire::RdmaMessage msg) {
    control_queue_.push_back(std::move(msg));
    flush_control_locked();
}

void Channel::flush_control_locked() {
    auto post_one = [this](wire::RdmaMessage &m) -> Status {
        uint32_t slot = free_send_slots_.back();
        free_send_slots_.pop_back();
        m.credits = credits_.on_send();
        if (log::enabled(log::Level::debug))
            log::debug(label_ + " event=rdma_control_send " + message_fields(m));
        uint8_t *buf = res_.control_send_slot(slot);
        std::size_t len = wire::encode(m, {buf, kControlSlot});
        ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), res_.messages_mr->lkey};
        ibv_send_wr wr{};
        wr.wr_id = make_wr_id(WorkKind::control_send, 0, slot);
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.opcode = IBV_WR_SEND;
        wr.send_flags = IBV_SEND_SIGNALED;
        ibv_send_wr *bad = nullptr;
        if (int rc = std::abs(ibv_post_send(res_.qp(0), &wr, &bad))) return fail_verbs("post a control message", rc);
        return {};
    };
    while (!control_queue_.empty()) {
        bool credit_only = control_queue_.front().type == wire::RdmaMessageType::credit;
        if (!credits_.may_send(credit_only) || free_send_slots_.empty()) break;
        wire::RdmaMessage m = std::move(control_queue_.front());
        control_queue_.pop_front();
        if (auto ok = post_one(m); !ok) return fail_locked(ok.error(), false);
    }
    // Whatever is still queued (or nothing), return owed credits when they
    // pile up: with both sides blocked on their last credit, this is what
    // unblocks them.
    if (credits_.should_return_credits() && credits_.may_send(true) && !free_send_slots_.empty()) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::credit;
        if (auto ok = post_one(m); !ok) fail_locked(ok.error(), false);
    }
}

void Channel::handle_control_message(const uint8_t *bytes, std::size_t len) {
    auto decoded = wire::decode({bytes, len});
    std::lock_guard lock(mutex_);
    if (!decoded) return fail_locked(decoded.error().with_context("from the peer"), true);
    const wire::RdmaMessage &m = *decoded;
    if (log::enabled(log::Level::debug))
        log::debug(label_ + " event=rdma_control_received " + message_fields(m));
    if (auto ok = credits_.on_returned(m.credits); !ok) return fail_locked(ok.error(), true);
    switch (m.type) {
        case wire::RdmaMessageType::credit: break;
        case wire::RdmaMessageType::file_begin:
            if (sink_ && !sink_->begun) start_sink_locked(m);
            else if (early_begin_ || sink_ || source_)
                fail_locked(Error::msg("peer announced a file while another transfer runs"), true);
            else early_begin_ = m;
            break;
        case wire::RdmaMessageType::grant: {
            if (!source_ || source_->done || m.file_id != source_->id) {
                fail_locked(Error::msg("peer granted blocks for a file this side is not sending"), true);
                break;
            }
            SourceFile &f = *source_;
            for (std::size_t i = 0; i < m.grant_count; ++i) {
                const wire::Grant &g = m.grants[i];
                if (auto ok = f.grants.accept(g); !ok) {
                    fail_locked(ok.error(), true);
                    return;
                }
                // More than a sink's pool can lend: a peer trying to make this
                // side queue grants without end.
                if (f.waiting.size() >= wire::kMaxGrantsOutstanding) {
                    fail_locked(Error{-EPROTO, "peer granted more than " +
                                                   std::to_string(wire::kMaxGrantsOutstanding) +
                                                   " blocks not yet filled"},
                                true);
                    return;
                }
                f.waiting.push_back(g);
            }
            assign_blocks_locked();
            break;
        }
        case wire::RdmaMessageType::block_done:
            fail_locked(Error::msg("peer sent a block notice on the control queue pair"), true);
            break;
        case wire::RdmaMessageType::file_done:
            if (!source_ || m.file_id != source_->id) {
                fail_locked(Error::msg("peer confirmed a file this side is not sending"), true);
            } else if (m.status != 0) {
                fail_locked(Error{-ECONNABORTED, "the receiving side failed: " + m.text}, false);  // as abort below
            } else if (m.bytes != source_->spec.size - source_->spec.start) {
                fail_locked(Error::msg("the receiving side confirmed " + std::to_string(m.bytes) + " bytes, " +
                                       std::to_string(source_->spec.size - source_->spec.start) + " were sent"),
                            true);
            } else {
                source_->confirmed = true;
                changed_.notify_all();
            }
            break;
        case wire::RdmaMessageType::abort:
            // The peer's errno is its own (its full disk or failing read is
            // not ours to report as such): here it is the peer breaking
            // off, and its text says why.
            fail_locked(Error{-ECONNABORTED, "the peer aborted: " + m.text}, false);
            break;
    }
    flush_control_locked();  // returned credits may let queued messages go, or ours may be due
}

// ---- completions ---------------------------------------------------------------

void Channel::dispatcher_loop() {
    ibv_comp_channel *comp = res_.completions.get();
    rdma_event_channel *events = res_.events.get();
    ibv_wc wcs[32];
    auto drain_cq = [&] {
        for (;;) {
            int n = ibv_poll_cq(res_.cq.get(), 32, wcs);
            if (n < 0) {
                std::lock_guard lock(mutex_);
                fail_locked(Error::msg("ibv_poll_cq failed"), false);
                return;
            }
            if (res_.replaced_a_queue_pair) n = drop_stale(wcs, n);
            if (worker_queues_.empty()) {
                for (int i = 0; i < n; ++i) handle_completion(wcs[i]);
                if (n < 32) return;
                continue;
            }
            // One lock and one wake-up per worker per batch, not per completion.
            for (std::size_t w = 0; w < worker_queues_.size(); ++w) {
                WorkerQueue &q = *worker_queues_[w];
                bool any = false;
                std::lock_guard lock(q.mutex);
                for (int i = 0; i < n; ++i)
                    if (wr_qp(wcs[i].wr_id) % worker_queues_.size() == w) q.items.push_back(wcs[i]), any = true;
                if (any) q.cv.notify_one();
            }
            if (n < 32) return;
        }
    };
    drain_cq();
    for (;;) {
        pollfd fds[3] = {{comp->fd, POLLIN, 0}, {events ? events->fd : -1, POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
        int rc = ::poll(fds, 3, 1000);
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
        }
        if (rc < 0) continue;
        if (fds[0].revents) {
            ibv_cq *cq = nullptr;
            void *ctx = nullptr;
            while (ibv_get_cq_event(comp, &cq, &ctx) == 0) ibv_ack_cq_events(cq, 1);
            ibv_req_notify_cq(res_.cq.get(), 0);
            drain_cq();  // what arrived before the notification was re-armed
        }
        if (fds[1].revents) handle_cm_event();
    }
}

// A queue pair whose connect failed on a taken port (cm_setup.cpp) was
// destroyed and made anew; its posted receives may come back flushed, by a
// queue pair number no longer in the channel. Those are not this channel's
// failures. Keeps the rest in order; returns how many.
int Channel::drop_stale(ibv_wc *wcs, int n) const {
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

void Channel::handle_cm_event() {
    rdma_cm_event *raw = nullptr;
    while (rdma_get_cm_event(res_.events.get(), &raw) == 0) {
        CmEvent ev(raw);
        auto type = ev->event;
        if (type == RDMA_CM_EVENT_DISCONNECTED || type == RDMA_CM_EVENT_DEVICE_REMOVAL) {
            std::lock_guard lock(mutex_);
            fail_locked(Error{-ECONNRESET, type == RDMA_CM_EVENT_DEVICE_REMOVAL ? "the RDMA device went away"
                                                                                : "the peer closed the RDMA connection"},
                        false);
        }
    }
}

void Channel::worker_loop(unsigned index) {
    WorkerQueue &q = *worker_queues_[index];
    std::deque<ibv_wc> batch;
    for (;;) {
        {
            std::unique_lock lock(q.mutex);
            q.cv.wait(lock, [&] { return !q.items.empty() || stop_workers_.load(); });
            if (q.items.empty()) return;
            batch.swap(q.items);  // everything queued, under one lock
        }
        for (const ibv_wc &wc : batch) handle_completion(wc);
        batch.clear();
    }
}

void Channel::handle_completion(const ibv_wc &wc) {
    WorkKind kind = wr_kind(wc.wr_id);
    unsigned qp = wr_qp(wc.wr_id);
    uint32_t index = wr_index(wc.wr_id);
    if (log::enabled(log::Level::debug))
        log::debug(label_ + " event=rdma_completion kind=" + std::to_string(static_cast<int>(kind)) + " queue_pair=" +
                   std::to_string(qp) + " index=" + std::to_string(index) + " qp_num=" + std::to_string(wc.qp_num) +
                   " status=" + ibv_wc_status_str(wc.status));
    if (wc.status != IBV_WC_SUCCESS) {
        std::lock_guard lock(mutex_);
        // A failed work request means the connection broke (the peer went
        // away, the link failed): a network error, never a disk's EIO.
        fail_locked(Error{-ECONNRESET, "RDMA completion error on queue pair " + std::to_string(qp) + ": " +
                                    ibv_wc_status_str(wc.status) + " (vendor error " + std::to_string(wc.vendor_err) + ")"},
                    false);
        return;
    }
    switch (kind) {
        case WorkKind::control_recv: {
            // The pool shares the control queue pair's protection domain: a
            // WRITE WITH IMMEDIATE there uses up a receive whose slot holds
            // an old message, which must not be read again as new.
            if (wc.opcode != IBV_WC_RECV) {
                std::lock_guard lock(mutex_);
                return fail_locked(Error::msg("peer broke the RDMA protocol: a WRITE WITH IMMEDIATE on the control queue pair"),
                                   true);
            }
            uint8_t copy[kControlSlot];
            std::size_t len = std::min<std::size_t>(wc.byte_len, kControlSlot);
            std::memcpy(copy, res_.control_recv_slot(index), len);
            {
                std::lock_guard lock(mutex_);
                if (failed_ || stopping_) return;
                if (auto ok = res_.post_control_recv(index); !ok) return fail_locked(ok.error(), false);
                credits_.on_reposted();
            }
            handle_control_message(copy, len);
            break;
        }
        case WorkKind::control_send: {
            std::lock_guard lock(mutex_);
            free_send_slots_.push_back(index);
            flush_control_locked();
            break;
        }
        case WorkKind::data_recv: {
            std::optional<uint32_t> file_id;
            uint32_t slot = 0, length = 0;
            NoticeMode mode = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM ? NoticeMode::write_with_imm : NoticeMode::write_then_send;
            bool bad = false;
            std::string why;
            if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                slot = ntohl(wc.imm_data);
                // The WRITE carried the block and its checksum trailer.
                if (wc.byte_len < kBlockTrailerBytes) bad = true, why = "a block too short to hold its checksum";
                else length = wc.byte_len - static_cast<uint32_t>(kBlockTrailerBytes);
            } else {
                auto m = wire::decode({res_.data_recv_slot(qp, index), std::min<std::size_t>(wc.byte_len, kNoticeSlot)});
                if (!m) bad = true, why = m.error().message;
                else if (m->type != wire::RdmaMessageType::block_done) bad = true, why = "a data queue pair carried a " + std::string(wire::to_string(m->type));
                else file_id = m->file_id, slot = m->slot, length = m->length;
            }
            {
                std::lock_guard lock(mutex_);
                if (failed_ || stopping_) return;
                if (auto ok = res_.post_data_recv(qp, index); !ok) return fail_locked(ok.error(), false);
                if (bad) return fail_locked(Error::msg("malformed block notice from the peer: " + why), true);
            }
            handle_notice(qp, slot, length, file_id, mode);
            break;
        }
        case WorkKind::write:
        case WorkKind::notice:
            handle_send_done(qp, index);
            break;
    }
}

// ---- monitor ---------------------------------------------------------------------

void Channel::monitor_loop() {
    std::unique_lock lock(mutex_);
    uint64_t last = 0;
    uint32_t last_file = 0;
    while (!stopping_) {
        monitor_cv_.wait_for(lock, std::chrono::seconds(1));
        if (stopping_) return;
        TransferProgress *p = source_ ? source_->progress : sink_ ? sink_->progress : nullptr;
        uint32_t file = source_ ? source_->id : sink_ ? sink_->id : 0;
        if (!p) continue;
        uint64_t now = p->bytes.load();
        if (file != last_file) last = 0, last_file = file;
        char line[200];
        std::snprintf(line, sizeof line, " event=rdma_progress role=%s file=%u bytes=%llu rate_mbps=%.1f",
                      source_ ? "source" : "sink", file, static_cast<unsigned long long>(now), (now - last) / 1e6);
        log::debug(label_ + line);
        last = now;
    }
}

}  // namespace rftp::middleware::rdma
