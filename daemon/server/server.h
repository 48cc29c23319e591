// The daemon's control-channel server on one libuv loop: listens on every
// configured address, admits sessions within the configured limits, and owns
// what all sessions share (options, authenticator, the loop bridge and the
// background threads).
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "daemon/auth/authenticator.h"
#include "daemon/auth/login_tickets.h"
#include "daemon/config/options.h"
#include "daemon/rdma/rdma_budget.h"
#include "daemon/server/background_tasks.h"
#include "daemon/server/login_gate.h"
#include "daemon/server/loop_bridge.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::daemon {

class Session;

class Server {
public:
    // tls: the context from load_tls_context (empty: TLS is not offered).
    Server(uv_loop_t *loop, DaemonOptions options, middleware::tls::SharedSslCtx tls = {});
    ~Server();
    Server(const Server &) = delete;
    Server &operator=(const Server &) = delete;

    // Binds and listens on every address of options().listen.
    Status start();
    // Stops accepting, ends every session (aborting transfers), and lets the loop run dry.
    void stop(const std::string &reason);

    const DaemonOptions &options() const { return options_; }
    const Authenticator &authenticator() const { return authenticator_; }
    LoopBridge &bridge() { return bridge_; }
    BackgroundTasks &tasks() { return tasks_; }
    RdmaBudget &rdma_budget() { return rdma_budget_; }
    // RDMA is offered (FEAT, RADR) when enabled, a device exists and memory can be pinned.
    bool rdma_offered() const { return rdma_offered_; }

    // The TLS context new sessions start with; empty when TLS is off.
    const middleware::tls::SharedSslCtx &tls_context() const { return tls_; }
    // Reads the certificate and key again (SIGHUP). On failure the old ones
    // stay and the log says why.
    void reload_tls();
    // The listener a session came in on.
    const ListenAddress &listener_of(uv_stream_t *listener) const;

    // Password checks: when each runs (daemon/server/login_gate.h).
    LoginGate &logins() { return logins_; }
    // Tickets that let a client's other sessions skip the password check.
    LoginTickets &login_tickets() { return login_tickets_; }

    // Called by a session once its connection is fully closed.
    void session_ended(uint64_t id, const sockaddr_storage &peer);

private:
    static void on_connection(uv_stream_t *listener, int status);
    void admit(uv_stream_t *listener);
    void close_when_tasks_are_done();
    static void on_stop_report(uv_timer_t *timer);

    uv_loop_t *loop_;
    DaemonOptions options_;
    Authenticator authenticator_;
    LoopBridge bridge_;
    BackgroundTasks tasks_;
    RdmaBudget rdma_budget_;
    bool rdma_offered_ = false;
    middleware::tls::SharedSslCtx tls_;
    std::vector<std::unique_ptr<uv_tcp_t>> listeners_;  // in the order of options_.listen
    std::map<uint64_t, std::shared_ptr<Session>> sessions_;
    std::map<std::string, unsigned> sessions_per_address_;
    uint64_t next_session_id_ = 1;
    LoginGate logins_;
    LoginTickets login_tickets_;
    bool stopping_ = false;
    // Once stopping: says in the log what work the stop still waits for.
    uv_timer_t stop_report_{};
    uint64_t stop_began_ms_ = 0;
};

}  // namespace rftp::daemon
