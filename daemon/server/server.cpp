#include "daemon/server/server.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "common/log.h"
#include "daemon/data/data_channel.h"
#include "daemon/server/service_manager.h"
#include "daemon/server/tls_setup.h"
#include "daemon/session/session.h"
#include "middleware/rdma/device_check.h"
#include "middleware/tls/kernel_tls.h"

namespace rftp::daemon {

Server::Server(uv_loop_t *loop, DaemonOptions options, middleware::tls::SharedSslCtx tls)
    : loop_(loop),
      options_(std::move(options)),
      authenticator_(options_),
      bridge_(loop),
      tasks_(bridge_),
      rdma_budget_(options_.rdma.max_pinned),
      tls_(std::move(tls)),
      logins_(loop, tasks_,
              LoginThrottle::Settings{std::chrono::seconds(options_.failed_login_delay_s),
                                      std::chrono::seconds(options_.failed_login_max_delay_s)}) {}

// Says once, at start, whether RDMA will be offered and what stands in its way.
static bool check_rdma(const RdmaOptions &o) {
    if (!o.enabled) {
        log::notice("event=rdma state=disabled reason=config");
        return false;
    }
    auto devices = middleware::rdma::device_names();
    if (devices.empty()) {
        log::notice("event=rdma state=off reason=" + log::quote("no RDMA device on this machine; transfers use TCP"));
        return false;
    }
    std::string names;
    for (const auto &d : devices) names += (names.empty() ? "" : ",") + d;
    if (auto problem = middleware::rdma::memlock_problem(o.pool_size)) {
        log::warning("event=rdma state=off devices=" + names + " reason=" + log::quote(*problem));
        return false;
    }
    if (auto problem = middleware::rdma::memlock_problem(o.max_pinned))
        log::warning("event=rdma state=limited devices=" + names + " reason=" +
                     log::quote(*problem + " (rdma.max_pinned); fewer channels will fit"));
    log::notice("event=rdma state=on devices=" + names + " max_pinned=" + std::to_string(o.max_pinned));
    return true;
}

Server::~Server() = default;

namespace {

// Closes a listener the server owned; the close callback frees it.
void close_listener(uv_tcp_t *listener) {
    uv_close(reinterpret_cast<uv_handle_t *>(listener), [](uv_handle_t *h) { delete reinterpret_cast<uv_tcp_t *>(h); });
}

}  // namespace

Status Server::start() {
    rdma_offered_ = check_rdma(options_.rdma);
    if (tls_)
        // Each transfer logs which path its records took (tls_path=).
        log::notice(std::string("event=tls state=on ktls=") +
                    (middleware::tls::kernel_has_ktls() ? "available" : "unavailable") +
                    " certificate=" + log::quote(options_.tls.certificate));
    for (const auto &l : options_.listen) {
        sockaddr_storage addr{};
        bool v6 = l.address.find(':') != std::string::npos;
        int r = v6 ? uv_ip6_addr(l.address.c_str(), l.port, reinterpret_cast<sockaddr_in6 *>(&addr))
                   : uv_ip4_addr(l.address.c_str(), l.port, reinterpret_cast<sockaddr_in *>(&addr));
        if (r != 0) return fail_msg("listen address " + l.address + ": " + uv_strerror(r), r);
        auto tcp = std::make_unique<uv_tcp_t>();
        uv_tcp_init(loop_, tcp.get());
        tcp->data = this;
        r = uv_tcp_bind(tcp.get(), reinterpret_cast<sockaddr *>(&addr), v6 ? UV_TCP_IPV6ONLY : 0);
        if (r == 0) r = uv_listen(reinterpret_cast<uv_stream_t *>(tcp.get()), 128, &Server::on_connection);
        if (r != 0) {
            // libuv needs the handle until its close callback, which frees it:
            // main drains the loop after a failed start.
            close_listener(tcp.release());
            return fail_msg("listen on " + l.address + " port " + std::to_string(l.port) + ": " + uv_strerror(r), r);
        }
        log::notice("event=listening address=" + l.address + " port=" + std::to_string(l.port) +
                    " tls=" + (l.implicit_tls ? "implicit" : !tls_ ? "off" : requires_tls(l) ? "required" : "offered"));
        listeners_.push_back(std::move(tcp));
    }
    return {};
}

void Server::on_connection(uv_stream_t *listener, int status) {
    auto *self = static_cast<Server *>(listener->data);
    if (status < 0) {
        log::warning(std::string("event=accept_failed error=") + log::quote(uv_strerror(status)));
        return;
    }
    self->admit(listener);
}

const ListenAddress &Server::listener_of(uv_stream_t *listener) const {
    for (std::size_t i = 0; i < listeners_.size(); ++i)
        if (reinterpret_cast<uv_stream_t *>(listeners_[i].get()) == listener) return options_.listen[i];
    return options_.listen.front();  // not reached: every listener is in the list
}

void Server::reload_tls() {
    if (!options_.tls.enabled()) {
        log::warning("event=sighup_ignored reason=\"rftpd reloads only its TLS certificate, and none is set; restart "
                     "it (systemctl restart rftpd) to apply config changes\"");
        return;
    }
    auto fresh = load_tls_context(options_.tls);
    if (!fresh) {
        log::error("event=tls_reload_failed error=" + log::quote(fresh.error().message) +
                   " reason=\"the certificate in use stays\"");
        return;
    }
    tls_ = std::move(*fresh);
    log::notice("event=tls_reloaded certificate=" + log::quote(options_.tls.certificate) +
                " reason=\"new sessions use it; other config changes need a restart\"");
}

void Server::admit(uv_stream_t *listener) {
    uint64_t id = next_session_id_++;
    auto session = std::make_shared<Session>(*this, id);
    if (!session->start(listener, listener_of(listener))) return;
    sessions_.emplace(id, session);
    std::string address = address_text(session->peer());
    unsigned &from_address = sessions_per_address_[address];
    ++from_address;
    if (stopping_) {
        session->reply_and_close(421, "Service shutting down.", "shutting down");
    } else if (sessions_.size() > options_.max_sessions) {
        log::warning("event=session_refused peer=" + address + " reason=max_sessions");
        session->reply_and_close(421, "Too many users, try again later.", "max_sessions reached");
    } else if (from_address > options_.max_sessions_per_ip) {
        log::warning("event=session_refused peer=" + address + " reason=max_sessions_per_ip");
        session->reply_and_close(421, "Too many connections from your address.", "max_sessions_per_ip reached");
    } else {
        session->greet();
    }
}

void Server::session_ended(uint64_t id, const sockaddr_storage &peer) {
    auto it = sessions_per_address_.find(address_text(peer));
    if (it != sessions_per_address_.end() && --it->second == 0) sessions_per_address_.erase(it);
    sessions_.erase(id);
    if (stopping_ && sessions_.empty()) close_when_tasks_are_done();
}

void Server::close_when_tasks_are_done() {
    // A transfer the stop cut short ends on its worker and logs its line from
    // the loop: the loop lives until then, so the log says what was cut.
    tasks_.when_all_done([this] {
        bridge_.close();
        // Called only once stopping, which started the report.
        if (!uv_is_closing(reinterpret_cast<uv_handle_t *>(&stop_report_)))
            uv_close(reinterpret_cast<uv_handle_t *>(&stop_report_), nullptr);
    });
}

namespace {
// A stop waits for the work under way, which a hung disk or network file
// system can hold for minutes (until systemd's SIGKILL): the log says which
// sessions' work that is, first after a few seconds, then now and again.
constexpr uint64_t kFirstStopReportMs = 5000;
constexpr uint64_t kStopReportEveryMs = 15000;
}  // namespace

void Server::on_stop_report(uv_timer_t *timer) {
    auto *self = static_cast<Server *>(timer->data);
    const std::string seconds = std::to_string((uv_now(self->loop_) - self->stop_began_ms_) / 1000);
    const auto unfinished = self->tasks_.unfinished();
    for (const std::string &what : unfinished)
        log::warning("event=stop_waiting seconds=" + seconds + " for=" + log::quote(what));
    // What `systemctl status rftpd` shows while the stop hangs: the oldest.
    if (!unfinished.empty())
        tell_service_manager_status("Stopping: " + seconds + " s waiting for " + std::to_string(unfinished.size()) +
                                    " piece(s) of work, the oldest: " + unfinished.front());
}

void Server::stop(const std::string &reason) {
    if (stopping_) return;
    stopping_ = true;
    stop_began_ms_ = uv_now(loop_);
    uv_timer_init(loop_, &stop_report_);
    stop_report_.data = this;
    uv_timer_start(&stop_report_, &Server::on_stop_report, kFirstStopReportMs, kStopReportEveryMs);
    // The work it reports on keeps the loop alive, not the report.
    uv_unref(reinterpret_cast<uv_handle_t *>(&stop_report_));
    log::notice("event=stopping reason=" + log::quote(reason) + " sessions=" + std::to_string(sessions_.size()));
    tell_service_manager_stopping("Stopping (" + reason + "): ending " + std::to_string(sessions_.size()) +
                                  " sessions");
    for (auto &l : listeners_) close_listener(l.release());
    listeners_.clear();
    logins_.stop();
    // Copy: closing a session may erase it from the map.
    auto sessions = sessions_;
    for (auto &[id, s] : sessions) s->reply_and_close(421, "Service shutting down.", "daemon stopping");
    if (sessions_.empty()) close_when_tasks_are_done();
}

}  // namespace rftp::daemon
