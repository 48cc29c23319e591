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
#include "daemon/auth/login_throttle.h"
#include "daemon/config/options.h"
#include "daemon/rdma/rdma_budget.h"
#include "daemon/server/background_tasks.h"
#include "daemon/server/loop_bridge.h"

namespace rftp::daemon {

class Session;

// One login's password check, for Server::run_login.
struct LoginCheck {
    uint64_t session = 0;  // whose: a check still waiting for its turn is dropped when the session ends
    std::string source;    // login_source(peer)
    std::chrono::milliseconds time_left{0};  // until the session's login timeout
    std::string what;      // names the work (BackgroundTasks::run)
    std::function<void()> work, done, refused;
};

class Server {
public:
    Server(uv_loop_t *loop, DaemonOptions options);
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

    // Runs a login check (one scrypt: 32 MiB and tens of milliseconds) with
    // at most max_concurrent_logins() at once; the rest wait their turn, so a
    // client reconnecting in a loop cannot pile up threads and memory. A
    // source with recent wrong passwords first waits for its turn from the
    // throttle, which the login's outcome updates. When that turn would come
    // after check.time_left nothing runs: the answer is how long the source
    // has to wait before it could get one.
    [[nodiscard]] std::optional<std::chrono::milliseconds> run_login(LoginCheck check);
    // A session that ended drops its check still waiting for its turn (the
    // turn stays taken: hanging up does not make the next one come sooner).
    void drop_delayed_login(uint64_t session);
    static unsigned max_concurrent_logins();
    LoginThrottle &login_throttle() { return login_throttle_; }

    // Called by a session once its connection is fully closed.
    void session_ended(uint64_t id, const sockaddr_storage &peer);

private:
    static void on_connection(uv_stream_t *listener, int status);
    void admit(uv_stream_t *listener);
    void close_when_tasks_are_done();
    void start_login(LoginCheck check);
    struct DelayedLogin;
    static void on_login_turn(uv_timer_t *timer);
    static void on_delayed_login_closed(uv_handle_t *timer);
    static void on_stop_report(uv_timer_t *timer);

    uv_loop_t *loop_;
    DaemonOptions options_;
    Authenticator authenticator_;
    LoopBridge bridge_;
    BackgroundTasks tasks_;
    RdmaBudget rdma_budget_;
    bool rdma_offered_ = false;
    std::vector<std::unique_ptr<uv_tcp_t>> listeners_;
    std::map<uint64_t, std::shared_ptr<Session>> sessions_;
    std::map<std::string, unsigned> sessions_per_address_;
    uint64_t next_session_id_ = 1;
    unsigned logins_running_ = 0;
    std::deque<LoginCheck> logins_waiting_;
    LoginThrottle login_throttle_;
    // By session: each owns its timer, freed once libuv closed it.
    std::map<uint64_t, DelayedLogin *> delayed_logins_;
    bool stopping_ = false;
    // Once stopping: says in the log what work the stop still waits for.
    uv_timer_t stop_report_{};
    uint64_t stop_began_ms_ = 0;
};

}  // namespace rftp::daemon
