// The RDMA extension (docs/protocol.md, "RDMA channel"): RADR sets up a
// channel the client connects to, RSTR and RRTR move a file over it. Each
// checks what it can on the loop; connection setup and transfers run off it.
#include <fcntl.h>
#include <sys/stat.h>


#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/data/upload_flow.h"
#include "daemon/server/server.h"
#include "daemon/session/session.h"
#include "middleware/tls/token_binding.h"
#include "middleware/rdma/device_check.h"
#include "protocol/rdma_setup.h"

namespace rftp::daemon {
namespace {

// Whether r is still the session's channel, asked without taking a reference:
// on the loop, a last reference dropped would unpin and join there.
bool is_sessions_channel(const Session &s, const std::weak_ptr<SessionRdma> &r) {
    return s.state.rdma && !r.owner_before(s.state.rdma) && !s.state.rdma.owner_before(r);
}

std::string rdma_fields(const char *direction, const std::string &path, const SessionRdma &r, bool block_checksums) {
    return std::string("direction=") + direction + " path=" + log::quote(path) + " transport=rdma streams=" +
           std::to_string(r.params().streams) + " block=" + std::to_string(r.params().block_size) +
           blocksum_field(block_checksums);
}

// The channel RSTR/RRTR will use, or nullptr after the reply that says why not.
std::shared_ptr<SessionRdma> channel_or_reply(Session &s) {
    if (!s.state.rdma || !s.state.rdma->channel()) {
        s.reply(503, "No RDMA channel: send RADR first.");
        return nullptr;
    }
    if (!s.state.rdma->usable()) {
        s.drop_rdma();
        s.reply(425, "The RDMA channel closed after a failed or aborted transfer: send RADR again.");
        return nullptr;
    }
    return s.state.rdma;
}

// A broken transfer's 426 says it was the RDMA channel that broke; other
// replies (451 for this host's disk, 452 for its space) already say what failed.
void mark_rdma_failure(TransferOutcome &out, const TransferJob &job) {
    if (out.code == 426 && !job.aborted()) out.text = "RDMA transfer failed; " + out.text;
}

std::string notice_detail(const Result<middleware::rdma::FileResult> &r) {
    if (!r) return "";
    return std::string("notice=") + middleware::rdma::to_string(r->notice);
}

TransferOutcome rdma_outcome(const Result<middleware::rdma::FileResult> &r, TransferJob &job) {
    if (!r) {
        TransferOutcome out = failed_outcome(r.error(), job.aborted(), job.progress.bytes.load());
        mark_rdma_failure(out, job);
        return out;
    }
    TransferOutcome out{226, "Transfer complete.", r->bytes, "ok"};
    out.detail = notice_detail(r);
    return out;
}

}  // namespace

// RADR <streams> <block bytes> <iodepth> [AHEAD]
//   -> 200 RADR port=P streams=S block=B depth=D token=HEX
void cmd_radr(Session &s, const std::string &arg) {
    if (!s.server().rdma_offered()) return s.reply(502, "RDMA is not offered by this server; use EPSV.");
    if (s.options().rdma.require_tls && !s.tls_active())
        return s.reply(534, "RDMA is offered only inside TLS here: send AUTH TLS first.");
    auto asked = ftp::parse_rdma_request(arg);
    if (!asked) return s.reply(501, "Usage: RADR <streams> <block bytes> <iodepth> [AHEAD]");
    s.drop_rdma();  // a new RADR replaces the channel
    const DaemonOptions &o = s.options();
    auto params = SessionRdma::grant(o.rdma, asked->streams, asked->block_size, asked->depth, o.data_timeout_s);
    params.disk = o.disk;
    params.grant_ahead = asked->ahead;  // the client takes them: grant its uploads' next files ahead
    auto prepared = SessionRdma::prepare(s.server().rdma_budget(), o.rdma, s.local(), params);
    if (!prepared) {
        const Error &e = prepared.error();
        log::notice(s.log_prefix() + " event=rdma_refused reason=" + log::quote(e.message));
        if (e.code == -ENOMEM) return s.reply(450, e.message + "; use TCP.");
        if (e.code == -ENODEV) return s.reply(425, "RDMA unavailable: " + e.message + "; use TCP.");
        return s.reply(451, "RDMA unavailable: " + e.message + "; use TCP.");
    }
    auto rdma = *prepared;
    if (s.tls_active()) {
        auto bound = middleware::tls::bind_tokens(s.tls_ssl(), rdma->token(), rdma->params().queue_pairs());
        if (!bound) return s.reply(451, "RDMA unavailable: " + bound.error().message + "; use TCP.");
        rdma->expect_tokens(std::move(*bound));
    }
    s.state.rdma = rdma;
    const auto &p = rdma->params();
    s.reply(200, ftp::format_rdma_grant({.port = rdma->port(),
                                         .streams = p.streams,
                                         .block_size = p.block_size,
                                         .depth = p.iodepth,
                                         .token = rdma->token()}));

    std::string prefix = s.log_prefix();
    auto result = std::make_shared<Status>();
    unsigned timeout = o.data_timeout_s;
    std::weak_ptr<Session> weak = s.weak_from_this();
    std::weak_ptr<SessionRdma> weak_rdma = rdma;  // the channel must not own its owner
    LoopBridge &bridge = s.server().bridge();
    // A failed channel cannot be used again: give its pinned memory and queue
    // pairs back at once, unless a transfer is still finishing on it (that
    // session drops it when that transfer ends).
    auto on_failure = [prefix, weak, weak_rdma, &bridge](const Error &e) {
        log::notice(prefix + " event=rdma_channel_closed reason=" + log::quote(e.message));
        bridge.post([weak, weak_rdma] {
            auto self = weak.lock();
            if (self && !self->closed() && is_sessions_channel(*self, weak_rdma) && !self->active_transfer())
                self->drop_rdma();
        });
    };
    s.run_blocking_work(
        [rdma, result, timeout, prefix, on_failure] {
            *result = rdma->accept(
                timeout, prefix, on_failure,
                [prefix](const std::string &why) {
                    log::warning(prefix + " event=rdma_connection_rejected reason=" + log::quote(why));
                });
        },
        // Weak here, as above; while it is the session's channel the session holds it.
        [weak, weak_rdma, result, prefix] {
            auto self = weak.lock();
            if (!self) return;
            const bool current = is_sessions_channel(*self, weak_rdma);
            if (!*result) {
                log::warning(prefix + " event=rdma_setup_failed reason=" + log::quote(result->error().message));
                if (current) self->drop_rdma();
                return;
            }
            if (!current) return;  // replaced or dropped meanwhile
            const std::shared_ptr<SessionRdma> &rdma = self->state.rdma;
            auto st = rdma->channel()->stats();
            log::info(prefix + " event=rdma_channel_up device=" + st.device + " queue_pairs=" +
                      std::to_string(st.queue_pairs) + " pinned=" + std::to_string(st.pinned_bytes) +
                      " huge_pages=" + middleware::huge_pages_word(st.pages) + " workers=" + std::to_string(st.workers));
        });
}

void cmd_rstr(Session &s, const std::string &arg) {
    PendingTransfer pending = take_pending_transfer(s);  // ALLO is not needed: the source announces the size
    const uint64_t rest = pending.rest;
    bool discard = arg == kDiscardPath;
    std::optional<std::string> vpath = discard ? std::optional<std::string>(arg) : resolve_or_reply(s, arg);
    if (!vpath) return;
    if (!discard) s.state.held_upload.reset();  // as STOR's (transfer_commands.cpp)
    if (!discard && !s.state.root->writable()) return s.reply(550, "Permission denied.");
    auto rdma = channel_or_reply(s);
    if (!rdma) return;
    if (discard && rest != 0) return s.reply(554, "REST makes no sense for /dev/null.");
    auto job = s.new_transfer_job();
    auto root = s.state.root;
    UploadRequest req{.path = *vpath, .rest = rest, .ranged = true, .sync = s.options().sync_before_rename,
                      .source = std::move(pending.source), .hold = pending.hold};
    bool preallocate = s.options().preallocate;
    bool sequential = s.options().rdma.sequential_writes;
    bool digest = s.state.digest_transfers;
    bool checksums = s.state.block_checksums;
    s.run_transfer(job, rdma_fields("store", *vpath, *rdma, checksums), [=]() -> TransferOutcome {
        middleware::rdma::Channel &channel = *rdma->channel();
        if (discard) {
            UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
            if (!null) return {451, "Could not open /dev/null.", 0, "failed"};
            job->preliminary("Ok to send data over RDMA (discarded).");
            middleware::RangeSet ranges(0);
            middleware::rdma::ReceiveSpec spec{.fd = null.get(), .block_checksums = checksums};
            return rdma_outcome(channel.receive_file(spec, job->progress, ranges), *job);
        }
        std::string detail;
        std::optional<TransferDigest> taken;
        TransferOutcome out = run_upload(*root, req, *job, [&](UploadTarget &target, middleware::RangeSet &ranges,
                                                               const std::function<void(uint64_t)> &on_prefix) -> Status {
            job->preliminary("Ok to send data over RDMA.");
            auto r = channel.receive_file({.fd = target.fd.get(),
                                           .start = target.start,
                                           .on_prefix_grown = on_prefix,
                                           .sequential = sequential,
                                           .preallocate = preallocate,
                                           .digest = digest,
                                           .block_checksums = checksums},
                                          job->progress, ranges);
            detail = notice_detail(r);
            if (!r) return fail(r.error());
            if (r->sha256) taken = TransferDigest::of(target.fd.get(), *r->sha256);
            return {};
        });
        if (out.code == 226) out.digest = std::move(taken);
        mark_rdma_failure(out, *job);
        out.detail = detail;
        return out;
    });
}

void cmd_rrtr(Session &s, const std::string &arg) {
    uint64_t rest = take_pending_transfer(s).rest;
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    auto source = open_for_retrieve(s, *vpath, rest);
    if (!source) return;
    uint64_t size = source->size;
    auto rdma = channel_or_reply(s);
    if (!rdma) return;
    auto job = s.new_transfer_job();
    auto file = std::make_shared<UniqueFd>(std::move(source->fd));
    std::string preliminary = "Opening RDMA transfer for " + *vpath + " (" + std::to_string(size) + " bytes).";
    bool digest = s.state.digest_transfers;
    bool checksums = s.state.block_checksums;
    s.run_transfer(job, rdma_fields("retrieve", *vpath, *rdma, checksums), [=]() -> TransferOutcome {
        job->preliminary(preliminary);
        // Remembered only for the file as it was throughout (of_unchanged):
        // otherwise HASH reads it again.
        auto before = TransferDigest::of(file->get(), "");
        auto r = rdma->channel()->send_file(
            {.fd = file->get(), .start = rest, .size = size, .digest = digest, .block_checksums = checksums},
            job->progress);
        TransferOutcome out = rdma_outcome(r, *job);
        if (r && r->sha256) out.digest = TransferDigest::of_unchanged(file->get(), before, *r->sha256, size);
        return out;
    });
}

}  // namespace rftp::daemon
