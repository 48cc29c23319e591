#include "daemon/session/session.h"

#include <sys/socket.h>

#include <chrono>
#include <utility>

#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/server/server.h"
#include "protocol/ftp_reply.h"

namespace rftp::daemon {
namespace {

// A client that does not read its replies must not make us buffer forever.
constexpr size_t kMaxUnsentReplyBytes = 1u << 20;
// How long a closing session waits for the client to take its last reply.
constexpr uint64_t kLastReplyGraceMs = 5000;
// A bare NOOP (a keepalive) may queue further: behind a HASH of a large
// file, which takes minutes, one every 30 s would otherwise reach the limit
// above in half an hour. A few bytes each; this bounds them too.
constexpr size_t kMaxWaitingWithKeepalives = 4096;

struct WriteRequest {
    uv_write_t req;
    std::string data;
};

// Verbs of RFC 959 that rftpd deliberately does not implement.
bool known_but_unimplemented(std::string_view verb) {
    for (auto v : {"ACCT", "SMNT", "REIN", "SITE", "STOU", "LANG", "MIC", "CONF", "ENC"})
        if (verb == v) return true;
    return false;
}

bool runs_during_transfer(std::string_view verb) { return verb == "ABOR" || verb == "STAT" || verb == "QUIT" || verb == "NOOP"; }

}  // namespace

Session::Session(Server &server, uint64_t id) : server_(server), id_(id) {}

Session::~Session() = default;

const DaemonOptions &Session::options() const { return server_.options(); }

std::string Session::log_prefix() const {
    std::string p = "session=" + std::to_string(id_) + " peer=" + address_text(peer_);
    if (!state.user.empty()) p += " user=" + log::quote(state.user);
    return p;
}

Status Session::start(uv_stream_t *listener, const ListenAddress &where) {
    tls_required_ = requires_tls(where);
    implicit_tls_ = where.implicit_tls;
    uv_tcp_init(listener->loop, &tcp_);
    tcp_.data = this;
    ++open_handles_;
    uv_timer_init(listener->loop, &timer_);
    timer_.data = this;
    ++open_handles_;
    self_while_open_ = shared_from_this();
    if (int r = uv_accept(listener, reinterpret_cast<uv_stream_t *>(&tcp_)); r != 0) {
        close("accept failed");
        return fail_msg(std::string("accept: ") + uv_strerror(r), r);
    }
    // Replies are small and latency-bound: without NODELAY every reply waits
    // for the client's delayed ACK (netkit ftpd loses ~40 ms per file so).
    uv_tcp_nodelay(&tcp_, 1);
    // Clients send ABOR after a Telnet "Synch" whose DM byte travels as TCP
    // urgent data; inline, the Telnet filter sees and drops it, instead of
    // the kernel taking it out of the stream and leaving a lone IAC.
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t *>(&tcp_), &fd) == 0) {
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &one, sizeof one);
    }
    int len = sizeof peer_;
    uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr *>(&peer_), &len);
    len = sizeof local_;
    uv_tcp_getsockname(&tcp_, reinterpret_cast<sockaddr *>(&local_), &len);
    return {};
}

void Session::greet() {
    log::info(log_prefix() + " event=connect" + (implicit_tls_ ? " tls=implicit" : ""));
    login_deadline_ms_ = uv_now(tcp_.loop) + static_cast<uint64_t>(options().login_timeout_s) * 1000;
    uv_read_start(reinterpret_cast<uv_stream_t *>(&tcp_), &Session::on_alloc, &Session::on_read);
    // Implicit FTPS: the greeting waits inside TLS until the handshake is done.
    if (implicit_tls_ && !start_tls()) return reply_and_close(421, "TLS is not available.", "TLS setup failed");
    reply(220, options().banner);
    arm_timer();
}

Status Session::start_tls() {
    tls_ctx_ = server_.tls_context();
    if (!tls_ctx_) return fail_msg("TLS is not configured");
    auto tls = middleware::tls::MemoryTls::accept(tls_ctx_.get());
    if (!tls) {
        log::error(log_prefix() + " event=tls_failed error=" + log::quote(tls.error().message));
        return fail(tls.error());
    }
    tls_ = std::make_unique<middleware::tls::MemoryTls>(std::move(*tls));
    tls_tag_ = middleware::tls::new_binding_tag();
    middleware::tls::set_binding_tag(tls_->ssl(), tls_tag_);
    // Urgent data (a Telnet Synch before ABOR) inline would land in the
    // middle of TLS records; out of band it is dropped, as it must be.
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t *>(&tcp_), &fd) == 0) {
        int zero = 0;
        ::setsockopt(fd, SOL_SOCKET, SO_OOBINLINE, &zero, sizeof zero);
    }
    return {};
}

bool Session::take_tls_input(std::string_view from_network, std::string &plain) {
    auto ok = tls_->take_in(from_network, plain);
    write_raw(tls_->drain());  // the handshake's answers, or an alert
    if (!ok) {
        log::notice(log_prefix() + " event=tls_failed error=" + log::quote(ok.error().message));
        close("TLS failed: " + ok.error().message);
        return false;
    }
    if (!tls_logged_ && tls_->handshake_done()) {
        tls_logged_ = true;
        tls_inherited_tag_ = middleware::tls::tag_established_session(tls_->ssl());
        log::info(log_prefix() + " event=tls version=" + SSL_get_version(tls_->ssl()) +
                  " cipher=" + SSL_get_cipher_name(tls_->ssl()));
    }
    return true;
}

void Session::reply(int code, std::string_view text) {
    if (closed_) return;
    std::string data = ftp::format_reply(code, text);
    if (tls_) {
        if (auto ok = tls_->put_out(data); !ok) {
            close("TLS failed: " + ok.error().message);
            return;
        }
        data = tls_->drain();
    }
    write_raw(std::move(data));
    log::debug(log_prefix() + " reply=" + std::to_string(code));
}

void Session::write_raw(std::string data) {
    if (closed_ || data.empty()) return;
    auto *w = new WriteRequest;
    w->data = std::move(data);
    w->req.data = w;
    uv_buf_t buf = uv_buf_init(w->data.data(), static_cast<unsigned>(w->data.size()));
    int r = uv_write(&w->req, reinterpret_cast<uv_stream_t *>(&tcp_), &buf, 1,
                     [](uv_write_t *req, int) { delete static_cast<WriteRequest *>(req->data); });
    if (r != 0) {
        delete w;
        close("write failed");
        return;
    }
    if (uv_stream_get_write_queue_size(reinterpret_cast<uv_stream_t *>(&tcp_)) > kMaxUnsentReplyBytes)
        close("client does not read its replies");
}

void Session::reply_and_close(int code, std::string_view text, const std::string &reason) {
    reply(code, text);
    closing_ = true;
    // Its ticket lapses with the reply, not once the client took it.
    server_.login_tickets().drop(id_);
    if (closed_) return;
    if (tls_) {
        tls_->close_notify();
        write_raw(tls_->drain());
    }
    uv_read_stop(reinterpret_cast<uv_stream_t *>(&tcp_));
    // The shutdown below ends only once the client has taken every queued
    // reply: one that never reads would hold its session, and the daemon's
    // own shutdown, forever. It gets a few seconds.
    uv_timer_start(&timer_, &Session::on_timer, kLastReplyGraceMs, 0);
    // uv_shutdown waits for queued writes, so the reply reaches the client first.
    auto *req = new uv_shutdown_t;
    auto *why = new std::string(reason);
    req->data = why;
    if (uv_shutdown(req, reinterpret_cast<uv_stream_t *>(&tcp_), [](uv_shutdown_t *r, int) {
            auto *reason_text = static_cast<std::string *>(r->data);
            auto *self = static_cast<Session *>(r->handle->data);
            self->close(*reason_text);
            delete reason_text;
            delete r;
        }) != 0) {
        delete why;
        delete req;
        close(reason);
    }
}

void Session::close(const std::string &reason) {
    if (closed_.exchange(true)) return;
    if (transfer_) transfer_->abort();
    if (work_cancel_) work_cancel_->abort.store(true);
    if (state.data_channel) state.data_channel->cancel();
    drop_rdma();
    server_.logins().drop(id_);
    server_.login_tickets().drop(id_);
    log::info(log_prefix() + " event=disconnect reason=" + log::quote(reason));
    uv_timer_stop(&timer_);
    for (uv_handle_t *h : {reinterpret_cast<uv_handle_t *>(&tcp_), reinterpret_cast<uv_handle_t *>(&timer_)})
        if (!uv_is_closing(h)) uv_close(h, &Session::on_handle_closed);
}

void Session::on_handle_closed(uv_handle_t *h) {
    auto *self = static_cast<Session *>(h->data);
    if (--self->open_handles_ > 0) return;
    self->server_.session_ended(self->id_, self->peer_);
    // Last statement: this may destroy the session.
    auto keep = std::move(self->self_while_open_);
}

void Session::on_alloc(uv_handle_t *h, size_t, uv_buf_t *buf) {
    auto *self = static_cast<Session *>(h->data);
    *buf = uv_buf_init(self->read_buffer_, sizeof self->read_buffer_);
}

void Session::on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    auto *self = static_cast<Session *>(s->data);
    if (n < 0) {
        self->close(n == UV_EOF ? "client closed the connection" : std::string("read: ") + uv_strerror(static_cast<int>(n)));
        return;
    }
    std::string_view bytes(buf->base, static_cast<size_t>(n));
    std::string decrypted;
    if (self->tls_) {
        if (!self->take_tls_input(bytes, decrypted)) return;
        bytes = decrypted;
    }
    std::string plain;
    self->telnet_.filter(bytes, plain);
    self->lines_.feed(plain);
    // Bytes are no command: a client that sends a byte a second and never
    // ends its line still meets the idle timeout.
    self->process_lines(false);
    if (self->tls_ && self->tls_->peer_closed() && !self->closed_) self->close("client ended TLS (close_notify)");
}

void Session::process_lines(bool rearm_timer) {
    std::string line;
    while (!closed_ && !closing_) {
        if (!busy_ && !waiting_lines_.empty()) {
            line = std::move(waiting_lines_.front());
            waiting_lines_.pop_front();
            rearm_timer = true;
            execute(line);
            continue;
        }
        auto next = lines_.next(line);
        if (next == ftp::LineReader::Next::need_more) break;
        rearm_timer = true;
        if (next == ftp::LineReader::Next::overlong) {
            reply(500, "Command line too long.");
            continue;
        }
        if (busy_) {
            // Only a transfer or an RDMA channel's setup lets these go ahead
            // of the queue (ABOR can end either); behind a login or a HASH
            // they wait their turn, or their replies would come out of order.
            bool interruptible = transfer_ || (state.rdma && !state.rdma->channel());
            auto cmd = ftp::parse_command(line);
            if (cmd && interruptible && runs_during_transfer(cmd->verb)) {
                execute(line);
            } else if (bool keepalive = cmd && cmd->verb == "NOOP" && cmd->argument.empty();
                       waiting_lines_.size() >= (keepalive ? kMaxWaitingWithKeepalives : kMaxWaitingCommands)) {
                reply_and_close(421, "Too many commands queued; closing.", "command flood");
            } else {
                waiting_lines_.push_back(std::move(line));
            }
            continue;
        }
        execute(line);
    }
    if (!closed_ && !closing_ && !busy_ && rearm_timer) arm_timer();
}

void Session::execute(const std::string &line) {
    // RNTO must follow RNFR directly (RFC 959 §4.1.3): any other command,
    // even one refused, ends the rename.
    std::string rename_from = std::exchange(state.rename_from, {});
    auto cmd = ftp::parse_command(line);
    if (!cmd) {
        reply(500, cmd.error().message);
        return;
    }
    // Never log a password or a login ticket, not even a wrong one.
    const bool secret = cmd->verb == "PASS" || cmd->verb == "TCKT";
    executing_ = "command=" + cmd->verb + (secret ? "" : " argument=" + log::quote(cmd->argument));
    log::debug(log_prefix() + " " + executing_);
    if (!takes_pending_transfer(cmd->verb) && !keeps_pending_transfer(cmd->verb)) (void)take_pending_transfer(*this);
    const CommandSpec *spec = find_command(cmd->verb);
    if (!spec) {
        if (known_but_unimplemented(cmd->verb)) reply(502, "Command not implemented.");
        else reply(500, "Unknown command.");
        return;
    }
    if (spec->needs_login && !logged_in()) {
        reply(530, "Please login with USER and PASS.");
        return;
    }
    if (spec->argument == Argument::required && cmd->argument.empty()) {
        // A refused transfer command drops REST, ALLO, SRCE and HOLD, as its handler would.
        if (takes_pending_transfer(spec->verb)) (void)take_pending_transfer(*this);
        reply(501, "Syntax error: " + std::string(spec->verb) + " needs an argument.");
        return;
    }
    if (spec->argument == Argument::none && !cmd->argument.empty()) {
        reply(501, "Syntax error: " + std::string(spec->verb) + " takes no argument.");
        return;
    }
    if (cmd->verb == "RNTO") state.rename_from = std::move(rename_from);
    spec->handler(*this, cmd->argument);
}

void Session::arm_timer() {
    if (closed_) return;
    // The login deadline counts from connecting, not from the last command:
    // a client sending NOOP forever must still log in or go.
    uint64_t now = uv_now(tcp_.loop);
    uint64_t ms = logged_in() ? static_cast<uint64_t>(options().idle_timeout_s) * 1000
                              : (login_deadline_ms_ > now ? login_deadline_ms_ - now : 0);
    uv_timer_start(&timer_, &Session::on_timer, ms, 0);
}

void Session::on_timer(uv_timer_t *t) {
    auto *self = static_cast<Session *>(t->data);
    if (self->closing_) return self->close("client did not take its last reply");
    if (self->busy_) return;
    if (self->logged_in()) self->reply_and_close(421, "Idle timeout; closing control connection.", "idle timeout");
    else self->reply_and_close(421, "Login timeout; closing control connection.", "login timeout");
}

// Work off the loop for this session: it runs only while the session is
// open, its done only on the loop and while the session is still there.
Session::GuardedWork Session::guard(std::function<void()> work, std::function<void()> done, bool even_if_closed) {
    busy_ = true;
    uv_timer_stop(&timer_);
    std::weak_ptr<Session> weak = weak_from_this();
    GuardedWork g;
    g.work = [weak, even_if_closed, work = std::move(work)] {
        bool wanted = even_if_closed;
        if (!wanted) {
            // Not held during work: the session must die on the loop, not here.
            auto self = weak.lock();
            wanted = self && !self->closed_.load();
        }
        if (wanted) work();
    };
    g.done = [weak, done = std::move(done)] {
        auto self = weak.lock();
        if (!self || self->closed_) return;
        done();
        self->finish_busy();
    };
    g.refused = [weak] {
        if (auto self = weak.lock(); self && !self->closed_) self->refuse_for_lack_of_resources();
    };
    g.what = log_prefix() + " " + executing_;
    return g;
}

void Session::run_blocking_work(std::function<void()> work, std::function<void()> done) {
    GuardedWork g = guard(std::move(work), std::move(done));
    server_.tasks().run(std::move(g.what), std::move(g.work), std::move(g.done), std::move(g.refused));
}

void Session::run_blocking_change(std::function<void()> work, std::function<void()> done) {
    GuardedWork g = guard(std::move(work), std::move(done), true);
    server_.tasks().run(std::move(g.what), std::move(g.work), std::move(g.done), std::move(g.refused));
}

void Session::run_login_check(const std::string &user, std::function<void()> work, std::function<void()> done) {
    GuardedWork g = guard(std::move(work), std::move(done));
    // The login timeout keeps counting while a login waits for its turn.
    const uint64_t now = uv_now(tcp_.loop);
    const std::chrono::milliseconds time_left(login_deadline_ms_ > now ? login_deadline_ms_ - now : 0);
    const std::string source = login_source(peer_);
    std::weak_ptr<Session> weak = weak_from_this();
    auto throttled = [weak, source](std::chrono::milliseconds wait) {
        auto self = weak.lock();
        if (!self || self->closed_) return;
        const auto seconds = std::to_string((wait.count() + 999) / 1000);
        log::notice(self->log_prefix() + " event=login_refused reason=\"too many failed logins from " + source +
                    "\" retry_after_s=" + seconds);
        self->reply_and_close(421, "Too many failed logins from your address; try again in " + seconds + " seconds.",
                              "too many failed logins from its address");
    };
    auto timed_out = [weak] {
        auto self = weak.lock();
        if (self && !self->closed_) self->reply_and_close(421, "Login timeout; closing control connection.", "login timeout");
    };
    server_.logins().run(LoginCheck{.session = id_,
                                    .source = source,
                                    .user = user,
                                    .deadline = LoginThrottle::Clock::now() + time_left,
                                    .what = std::move(g.what),
                                    .work = std::move(g.work),
                                    .done = std::move(g.done),
                                    .refused = std::move(g.refused),
                                    .throttled = std::move(throttled),
                                    .timed_out = std::move(timed_out)});
}

std::shared_ptr<middleware::TransferProgress> Session::cancellable_work() {
    work_cancel_ = std::make_shared<middleware::TransferProgress>();
    return work_cancel_;
}

Result<std::shared_ptr<TransferJob>> Session::take_data_channel(bool framed) {
    if (state.data_channel) return new_transfer_job(std::move(state.data_channel));
    if (framed && !state.kept_data.empty()) {
        auto kept = std::exchange(state.kept_data, {});
        auto job = new_transfer_job(DataChannel::kept(std::move(kept.plain)));
        job->adopt_relays(std::move(kept.relays));
        return job;
    }
    return fail_msg("Use PASV or EPSV first.");
}

void Session::drop_rdma() {
    if (!state.rdma) return;
    auto rdma = std::move(state.rdma);
    rdma->stop_setup();
    // Aborting a transfer waits for the channel's lock, and joining its
    // threads and destroying queue pairs take a moment: not on the loop.
    // Whichever closure runs drops the one reference, on its thread; the
    // copies the loop keeps are then empty. With no thread to spare it is
    // done here after all: a pause, not a leak.
    auto held = std::make_shared<std::shared_ptr<SessionRdma>>(std::move(rdma));
    auto tried = std::make_shared<bool>(false);
    auto release = [held, tried] {
        *tried = true;
        (*held)->cancel();
        held->reset();
    };
    // Refused after it threw, it is not tried again on the loop: the
    // reference goes, and with it whatever cancel() left.
    server_.tasks().run(log_prefix() + " releasing its RDMA channel", release, [] {},
                        [release, held, tried] { *tried ? held->reset() : release(); });
}

std::shared_ptr<TransferJob> Session::new_transfer_job(std::unique_ptr<DataChannel> channel) {
    std::weak_ptr<Session> weak = weak_from_this();
    LoopBridge &bridge = server_.bridge();
    auto send_reply = [weak, &bridge](int code, std::string text) {
        bridge.post([weak, code, text = std::move(text)] {
            if (auto self = weak.lock(); self && !self->closed_) self->reply(code, text);
        });
    };
    // Under PROT P the data connection's TLS binds it to this session; the
    // data token would cross the network in clear before that TLS began.
    const bool protect = state.protect_data && tls_ && channel;  // RSTR/RRTR: RDMA, never encrypted
    auto job = std::make_shared<TransferJob>(std::move(channel), peer_, protect ? std::nullopt : state.data_token,
                                             options().data_timeout_s, std::move(send_reply));
    if (protect)
        job->protect(DataTls{.ctx = tls_ctx_,
                             .tag = tls_tag_,
                             .inherited = tls_inherited_tag_,
                             .must_resume = options().tls.data_binding == DataBinding::session});
    return job;
}

void Session::run_transfer(std::shared_ptr<TransferJob> job, std::string what, std::function<TransferOutcome()> body) {
    transfer_ = job;
    abort_requested_ = false;
    busy_ = true;
    uv_timer_stop(&timer_);
    auto outcome = std::make_shared<TransferOutcome>();
    auto started = std::chrono::steady_clock::now();
    std::string fields = log_prefix() + " event=transfer " + what + (job->protected_data() ? " data=tls" : "");
    std::weak_ptr<Session> weak = weak_from_this();
    // Out of memory mid-transfer (a throw): a failed transfer like any other
    // (451, logged, an ABOR answered), and a channel it ran on, its state
    // cut short anywhere, is not trusted with another.
    auto threw = std::make_shared<bool>(false);
    server_.tasks().run(fields, [outcome, threw, job, body = std::move(body)] {
                            try {
                                *outcome = body();
                            } catch (const std::exception &e) {
                                *threw = true;
                                *outcome = failed_outcome(Error{-ENOMEM, std::string("the server could not go on (") +
                                                                             e.what() + ")"},
                                                          job->aborted(), job->progress.bytes.load());
                            }
                        },
                        [weak, job, outcome, threw, started, fields] {
                            // Logged even when the client is gone: the log is
                            // how an operator learns a transfer failed.
                            double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
                            double rate = seconds > 0 ? outcome->bytes / seconds / 1e6 : 0;
                            char numbers[160];
                            std::snprintf(numbers, sizeof numbers, " bytes=%llu seconds=%.3f rate_mbps=%.1f result=%s",
                                          static_cast<unsigned long long>(outcome->bytes), seconds, rate,
                                          outcome->result.c_str());
                            // A failure says why, in the reply the client got.
                            std::string reason = outcome->result == "ok" ? "" : " reason=" + log::quote(std::to_string(outcome->code) + " " + outcome->text);
                            // How the file met the disk (TCP; an RDMA channel logs its own).
                            const std::string &disk = job->progress.disk_summary;
                            // Blocks damaged on the way and sent again: a link worth a look.
                            const uint64_t resent = job->progress.blocks_resent.load();
                            // Under PROT P: whether the kernel carried the records (kernel_tls.h).
                            const std::string tls_path = job->tls_path();
                            // At notice: the audit trail outlives log.level notice.
                            log::notice(fields + (tls_path.empty() ? "" : " tls_path=" + tls_path) + numbers +
                                        (outcome->detail.empty() ? "" : " " + outcome->detail) + reason +
                                        (resent ? " blocks_resent=" + std::to_string(resent) : "") +
                                        (disk.empty() ? "" : " " + disk));
                            auto self = weak.lock();
                            if (!self || self->closed_) return;
                            self->transfer_.reset();
                            // A channel the transfer broke cannot serve another:
                            // its pinned memory goes back now, not at the next command.
                            if (self->state.rdma && self->state.rdma->channel() &&
                                (*threw || !self->state.rdma->usable()))
                                self->drop_rdma();
                            if (outcome->digest) self->state.last_digest = std::move(outcome->digest);
                            // One held upload at a time: the last one's lock goes,
                            // and its partial file stays whole for `put -c`.
                            if (outcome->held) self->state.held_upload = std::move(outcome->held);
                            // DATAKEEP: the connections of a transfer that ended well serve the next.
                            if (outcome->keep_connections && outcome->code == 226 && !self->abort_requested_)
                                self->state.kept_data = job->release_connections();
                            self->reply(outcome->code, outcome->text);
                            if (self->abort_requested_) self->reply(226, "ABOR command successful.");
                            self->finish_busy();
                        },
                        // No thread for it (a throw is caught in the work itself).
                        [weak, fields] {
                            log::warning(fields + " result=failed reason=\"no thread for the transfer\"");
                            auto self = weak.lock();
                            if (!self || self->closed_) return;
                            self->transfer_.reset();
                            self->reply(451, "Requested action aborted: the server has no thread or memory to spare; "
                                             "try again later.");
                            self->finish_busy();
                        });
}

void Session::refuse_for_lack_of_resources() {
    // Whatever the command was waiting for cannot happen: say so and end the
    // session cleanly rather than leave it waiting for ever.
    reply_and_close(421, "Service not available: the server has no thread or memory to spare; try again later.",
                    "no thread or memory for the session's work");
}

void Session::abort_transfer() {
    if (!transfer_) return;
    abort_requested_ = true;
    transfer_->abort();
}

void Session::finish_busy() {
    busy_ = false;
    process_lines(true);  // the timer stopped while the work ran
}

}  // namespace rftp::daemon
