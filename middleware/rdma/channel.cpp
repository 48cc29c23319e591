// Channel lifecycle, the gate that lets one file at a time through, the
// completion handlers that route each completion and control message to
// its part, failure of the whole channel, and the monitor.
#include "middleware/rdma/channel.h"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <string>
#include <system_error>

#include "common/log.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {

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
    Channel *p = c.get();
    auto dispatcher = CompletionDispatcher::start(c->core_.res, c->core_.params().workers, c->core_.label,
                                                  {.completion = [p](const ibv_wc &wc) { p->handle_completion(wc); },
                                                   .failure = [p](const Error &e) { p->fail_channel(e, false); }});
    if (!dispatcher) return fail(dispatcher.error());
    c->dispatcher_ = std::move(*dispatcher);
    if (auto ok = c->source_.start(); !ok) return fail(ok.error());
    if (auto ok = c->sink_.start(); !ok) return fail(ok.error());
    // Out of threads, std::thread throws: that is this channel's failure,
    // not the process's. The destructor stops and joins those started.
    try {
        c->monitor_ = std::thread([p] { p->monitor_loop(); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("start the RDMA channel's monitor: ") + e.what(), -e.code().value());
    }
    return c;
}

Channel::Channel(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure)
    : core_(std::move(resources), std::move(label), std::move(on_failure)), source_(core_), sink_(core_) {}

Channel::~Channel() {
    core_.stopping = true;
    if (dispatcher_) dispatcher_->stop();  // no completion handler runs after this
    source_.stop();
    sink_.stop();
    {
        std::lock_guard lock(monitor_mutex_);
        monitor_stopping_ = true;
    }
    monitor_cv_.notify_all();
    if (monitor_.joinable()) monitor_.join();
    // Tell the peer at once rather than let it find out from a timeout.
    for (auto &c : core_.res.connections)
        if (c) rdma_disconnect(c.get());
    // core_ now releases the queue pairs, registrations, queue and domain, in reverse.
}

ChannelStats Channel::stats() const {
    const ChannelResources &res = core_.res;
    ChannelStats s;
    s.device = res.device() ? ibv_get_device_name(res.device()->device) : "";
    s.queue_pairs = res.params.queue_pairs();
    s.pinned_bytes = res.pool.size() + res.messages.size();
    s.pages = res.pool.pages();
    s.workers = dispatcher_ ? dispatcher_->workers() : 0;
    return s;
}

// ---- the gate ------------------------------------------------------------------

Status Channel::may_start_locked() {
    if (auto e = core_.latch.error()) return fail(e->with_context("RDMA channel unusable"));
    if (role_ != Role::idle) return fail_msg("a transfer is already running on this RDMA channel");
    return {};
}

Result<FileResult> Channel::send_file(const SendSpec &spec, TransferProgress &progress) {
    uint32_t id = 0;
    {
        std::lock_guard lock(gate_mutex_);
        if (auto ok = may_start_locked(); !ok) return fail(ok.error());
        // A peer that announced a file of its own meanwhile broke the protocol:
        // kept, it would be taken for the start of some later upload.
        if (early_begin_) {
            Error e = Error::msg("peer announced a file while this side was to send one");
            fail_channel(e, true);
            return fail(e);
        }
        role_ = Role::sending;
        id = ++next_file_id_;
        // Announcing a file of its own, this side lets its grants ahead lapse.
        sink_.forget_grants_ahead();
    }
    auto result = source_.send(spec, progress, id);
    std::lock_guard lock(gate_mutex_);
    role_ = Role::idle;
    return result;
}

Result<FileResult> Channel::receive_file(const ReceiveSpec &spec, TransferProgress &progress, RangeSet &received) {
    {
        std::lock_guard lock(gate_mutex_);
        if (auto ok = may_start_locked(); !ok) return fail(ok.error());
        if (auto ok = sink_.open(spec, progress, received); !ok) return fail(ok.error());
        role_ = Role::receiving;
        if (early_begin_) {
            wire::RdmaMessage begin = *early_begin_;
            early_begin_.reset();
            sink_.try_begin(begin);  // taken: the file was opened just now
        }
    }
    auto result = sink_.wait();
    std::lock_guard lock(gate_mutex_);
    role_ = Role::idle;
    return result;
}

// A file_begin goes to the file being received, or waits for receive_file;
// one while this side sends, or a second one, breaks the protocol.
void Channel::handle_file_begin(const wire::RdmaMessage &begin) {
    std::lock_guard lock(gate_mutex_);
    source_.forget_grants_ahead();  // the peer's lapse as it announces a file
    bool busy = role_ == Role::sending || early_begin_.has_value();
    if (!busy && role_ == Role::receiving) {
        SinkPipeline::Begin b = sink_.try_begin(begin);
        if (b == SinkPipeline::Begin::taken) return;
        busy = b == SinkPipeline::Begin::already_begun;  // no_file: that receive is ending
    }
    if (busy) return fail_channel(Error::msg("peer announced a file while another transfer runs"), true);
    early_begin_ = begin;
}

// ---- failure -------------------------------------------------------------------

void Channel::abort(const std::string &why) { fail_channel(Error{-ECANCELED, why}, true); }

void Channel::fail_channel(const Error &e, bool tell_peer) {
    uint32_t file = source_.current_file();
    if (file == 0) file = sink_.current_file();
    core_.fail(e, tell_peer, file);
    source_.end_file(e);
    sink_.end_file(e);
}

// ---- completions -----------------------------------------------------------------

void Channel::handle_completion(const ibv_wc &wc) {
    WorkKind kind = wr_kind(wc.wr_id);
    unsigned qp = wr_qp(wc.wr_id);
    uint32_t index = wr_index(wc.wr_id);
    if (log::enabled(log::Level::debug))
        log::debug(core_.label + " event=rdma_completion kind=" + std::to_string(static_cast<int>(kind)) +
                   " queue_pair=" + std::to_string(qp) + " index=" + std::to_string(index) +
                   " qp_num=" + std::to_string(wc.qp_num) + " status=" + ibv_wc_status_str(wc.status));
    if (wc.status != IBV_WC_SUCCESS) {
        // A failed work request means the connection broke (the peer went
        // away, the link failed): a network error, never a disk's EIO.
        return fail_channel(Error{-ECONNRESET, "RDMA completion error on queue pair " + std::to_string(qp) + ": " +
                                           ibv_wc_status_str(wc.status) + " (vendor error " +
                                           std::to_string(wc.vendor_err) + ")"},
                    false);
    }
    switch (kind) {
        case WorkKind::control_recv: {
            // The pool shares the control queue pair's protection domain: a
            // WRITE WITH IMMEDIATE there uses up a receive whose slot holds
            // an old message, which must not be read again as new.
            if (wc.opcode != IBV_WC_RECV)
                return fail_channel(Error::msg("peer broke the RDMA protocol: a WRITE WITH IMMEDIATE on the control queue pair"),
                            true);
            uint8_t copy[kControlSlot];
            std::size_t len = std::min<std::size_t>(wc.byte_len, kControlSlot);
            std::memcpy(copy, core_.res.control_recv_slot(index), len);
            if (!core_.usable()) return;
            if (auto ok = core_.link.repost_receive(index); !ok) return fail_channel(ok.error(), false);
            return handle_control_message(copy, len);
        }
        case WorkKind::control_send:
            if (auto ok = core_.link.send_completed(index); !ok) fail_channel(ok.error(), false);
            return;
        case WorkKind::data_recv:
            return handle_data_receive(wc);
        case WorkKind::write:
        case WorkKind::notice:
            return source_.on_send_done(qp, index);
    }
}

// A block notice on a data queue pair: the immediate of a WRITE WITH
// IMMEDIATE, or a block_done message sent after a plain WRITE.
void Channel::handle_data_receive(const ibv_wc &wc) {
    const unsigned qp = wr_qp(wc.wr_id);
    const uint32_t index = wr_index(wc.wr_id);
    std::optional<uint32_t> file_id;
    uint32_t slot = 0, length = 0;
    NoticeMode mode = wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM ? NoticeMode::write_with_imm : NoticeMode::write_then_send;
    std::string bad;
    if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
        slot = ntohl(wc.imm_data);
        // The WRITE carried the block and its checksum trailer.
        if (wc.byte_len < kBlockTrailerBytes) bad = "a block too short to hold its checksum";
        else length = wc.byte_len - static_cast<uint32_t>(kBlockTrailerBytes);
    } else {
        auto m = wire::decode({core_.res.data_recv_slot(qp, index), std::min<std::size_t>(wc.byte_len, kNoticeSlot)});
        if (!m) bad = m.error().message;
        else if (m->type != wire::RdmaMessageType::block_done) bad = "a data queue pair carried a " + std::string(wire::to_string(m->type));
        else file_id = m->file_id, slot = m->slot, length = m->length;
    }
    if (!core_.usable()) return;
    if (auto ok = core_.res.post_data_recv(qp, index); !ok) return fail_channel(ok.error(), false);
    if (!bad.empty()) return fail_channel(Error::msg("malformed block notice from the peer: " + bad), true);
    if (auto ok = sink_.on_notice(qp, slot, length, file_id, mode); !ok) fail_channel(ok.error(), true);
}

void Channel::handle_control_message(const uint8_t *bytes, std::size_t len) {
    auto decoded = wire::decode({bytes, len});
    if (!decoded) return fail_channel(decoded.error().with_context("from the peer"), true);
    const wire::RdmaMessage &m = *decoded;
    if (log::enabled(log::Level::debug))
        log::debug(core_.label + " event=rdma_control_received " + wire::header_fields(m));
    if (auto ok = core_.link.take_credits(m.credits); !ok) return fail_channel(ok.error(), true);
    // Returned credits may let queued messages go, or a credit-only message be due.
    if (auto ok = core_.link.flush(); !ok) return fail_channel(ok.error(), false);
    switch (m.type) {
        case wire::RdmaMessageType::credit: return;
        case wire::RdmaMessageType::file_begin: return handle_file_begin(m);
        case wire::RdmaMessageType::grant:
            if (auto ok = source_.on_grants(m); !ok) fail_channel(ok.error(), true);
            return;
        case wire::RdmaMessageType::grant_ahead:
            if (auto ok = source_.on_grants_ahead(m); !ok) fail_channel(ok.error(), true);
            return;
        case wire::RdmaMessageType::file_done:
            if (auto ok = source_.on_file_done(m); !ok) fail_channel(ok.error(), true);
            return;
        case wire::RdmaMessageType::block_done:
            return fail_channel(Error::msg("peer sent a block notice on the control queue pair"), true);
        case wire::RdmaMessageType::abort:
            // The peer's errno is its own (its full disk or failing read is
            // not ours to report as such): here it is the peer breaking
            // off, and its text says why.
            return fail_channel(Error{-ECONNABORTED, "the peer aborted: " + m.text}, false);
    }
}

// ---- monitor ---------------------------------------------------------------------

void Channel::monitor_loop() {
    std::unique_lock lock(monitor_mutex_);
    uint64_t last = 0;
    uint32_t last_file = 0;
    while (!monitor_stopping_) {
        monitor_cv_.wait_for(lock, std::chrono::seconds(1));
        if (monitor_stopping_) return;
        const char *role = "source";
        auto sample = source_.progress();
        if (!sample) role = "sink", sample = sink_.progress();
        if (!sample) continue;
        if (sample->file != last_file) last = 0, last_file = sample->file;
        char line[200];
        std::snprintf(line, sizeof line, " event=rdma_progress role=%s file=%u bytes=%llu rate_mbps=%.1f", role,
                      sample->file, static_cast<unsigned long long>(sample->bytes), (sample->bytes - last) / 1e6);
        log::debug(core_.label + line);
        last = sample->bytes;
    }
}

}  // namespace rftp::middleware::rdma
