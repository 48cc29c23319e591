// One client's control connection, on the event loop. It reads command lines,
// dispatches them through the command table, writes replies, enforces the
// login and idle timeouts, and owns what the client set up: login, working
// directory, transfer settings, the data channel and a running transfer.
// Handlers (daemon/commands/) act on it through this interface.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "daemon/auth/authenticator.h"
#include "daemon/data/data_channel.h"
#include "daemon/data/transfer_digest.h"
#include "daemon/data/transfer_job.h"
#include "daemon/rdma/session_rdma.h"
#include "daemon/config/options.h"
#include "daemon/vfs/user_root.h"
#include "middleware/tcp/stream_cache.h"
#include "middleware/tls/kept_connections.h"
#include "middleware/tls/memory_tls.h"
#include "middleware/tls/session_binding.h"
#include "protocol/ftp_command.h"
#include "protocol/token.h"
#include "protocol/telnet_filter.h"

namespace rftp::daemon {

// Commands that may queue up behind a running transfer or a HASH; one more
// ends the session (421). FEAT says it (PIPELINE), so a client that sends
// many files' commands ahead keeps within it. A line is at most 4 KiB.
inline constexpr std::size_t kMaxWaitingCommands = 256;

class Server;

// What commands change and later commands read.
struct SessionState {
    // Login.
    std::string pending_user;      // after USER, before PASS
    std::string user;              // after a successful PASS
    LoginGrant grant;              // what that login granted (login tickets hand it on)
    // Set once logged in; shared so a running transfer keeps it open.
    std::shared_ptr<const UserRoot> root;
    std::string cwd = "/";
    unsigned failed_logins = 0;
    unsigned refused_tickets = 0;  // TCKT <ticket> refused (login_commands.cpp)

    // Transfer settings.
    bool ascii = false;            // TYPE A
    uint64_t restart_offset = 0;   // REST, consumed by the next RETR/STOR/APPE
    // ALLO <size>: the size the next STOR's file will have; that STOR
    // reserves [REST offset, size) before its 150 (and answers 452 at once
    // when the disk has no room). Like REST, taken by the next transfer command.
    std::optional<uint64_t> allocate_size;
    // SRCE <token>: the local file the next upload comes from, recorded on
    // its partial file so a resume can tell whether it holds that file's
    // beginning. Like REST, taken by the next transfer command.
    std::optional<std::string> upload_source;
    // HOLD: the next upload (STOR or RSTR), once complete and synced, stays
    // as its partial file until COMT puts it in place, so a client that
    // finds its digest wrong never had it under the final name. Like REST,
    // taken by the next transfer command.
    bool hold_next_upload = false;
    // The upload HOLD kept aside, locked against other uploaders until COMT,
    // the next held upload, a DELE of it, or the session's end (the partial
    // then stays whole, for `put -c` to finish).
    std::shared_ptr<UploadTarget> held_upload;
    std::string rename_from;       // RNFR, consumed by RNTO
    // OPTS PARALLEL: 0 is plain stream mode; n >= 1 is framed blocks over n
    // connections (docs/protocol.md), which also makes the end of a file explicit.
    unsigned parallel = 0;
    uint32_t block_size = 8u << 20;
    std::unique_ptr<DataChannel> data_channel;  // from PASV/EPSV/PORT/EPRT
    // OPTS DATAKEEP ON: a framed RETR or STOR that ends with 226 leaves its
    // connections here, for the next one of as many streams (docs/protocol.md,
    // "Kept data connections"); under PROT P with their TLS. PASV, EPSV,
    // PORT and EPRT close them.
    bool keep_data = false;
    // OPTS DATAKEEP ON UNECHOED: a RETR of at most one block on kept
    // connections ends at its EOD frame, without waiting for the echo.
    bool keep_unechoed = false;
    middleware::tls::KeptConnections kept_data;
    bool epsv_all = false;         // EPSV ALL: every other way to set up data connections is refused (RFC 2428 §3)
    std::shared_ptr<SessionRdma> rdma;  // from RADR; reused by RSTR/RRTR until replaced or the session ends

    // RFC 4217: PBSZ 0 came (after AUTH TLS), and PROT P asks for TLS on
    // every data connection from then on.
    bool pbsz_done = false;
    bool protect_data = false;

    // OPTS HASH SHA-256: the client will ask for digests, so RSTR and RRTR
    // take the file's SHA-256 while its blocks pass, and HASH answers from
    // the last one while that file is unchanged (no second read).
    bool digest_transfers = false;
    std::optional<TransferDigest> last_digest;
    // OPTS BLOCKSUM: whether framed and RDMA blocks carry a checked CRC32C
    // (the client may turn them off for its own transfers).
    bool block_checksums = true;
    // OPTS DATATOKEN: once the client took one, every passive data
    // connection must show it first (protocol/data_token.h), so one another
    // program opens to the port first is refused, not served.
    std::optional<wire::Token> data_token;
    // TCP transfer buffers and rings kept between this session's transfers,
    // so a small file finds its memory mapped and faulted in and its disk
    // engine set up (stream_cache.h). New at each login: the buffers hold
    // the bytes of the user who moved them. Shared so a running transfer
    // keeps them.
    std::shared_ptr<middleware::StreamCache> stream_kept;
};

class Session : public std::enable_shared_from_this<Session> {
public:
    Session(Server &server, uint64_t id);
    ~Session();
    Session(const Session &) = delete;
    Session &operator=(const Session &) = delete;

    // Accepts the pending connection from listener, configured as where.
    Status start(uv_stream_t *listener, const ListenAddress &where);
    // Starts reading commands and sends the 220 greeting (inside TLS on an
    // implicit-TLS listener).
    void greet();

    // TLS on the control connection from here on (AUTH TLS, after its 234).
    Status start_tls();
    bool tls_active() const { return tls_ != nullptr; }
    SSL *tls_ssl() const { return tls_ ? tls_->ssl() : nullptr; }
    // This listener takes logins only inside TLS and data only under PROT P.
    bool tls_required() const { return tls_required_; }
    // Commands that arrived behind the one running (AUTH TLS refuses them:
    // they were sent in clear and must not run as if inside TLS).
    bool has_unread_commands() const { return !waiting_lines_.empty() || lines_.buffered() > 0; }
    // Ends the session: stops a transfer, closes the connection. Idempotent.
    void close(const std::string &reason);
    // Sends the reply, then ends the session.
    void reply_and_close(int code, std::string_view text, const std::string &reason);

    void reply(int code, std::string_view text);

    Server &server() { return server_; }
    const DaemonOptions &options() const;
    uint64_t id() const { return id_; }
    const sockaddr_storage &peer() const { return peer_; }
    const sockaddr_storage &local() const { return local_; }
    bool logged_in() const { return state.root != nullptr; }
    bool closed() const { return closed_.load(); }

    // Runs work off the loop; done runs on the loop only if the session is
    // still open. While it runs, commands wait their turn (docs/protocol.md).
    // A login goes through the server's login limit; work is skipped when
    // the session closed while it waited.
    void run_blocking_work(std::function<void()> work, std::function<void()> done);
    // As run_blocking_work, for a change to the user's tree (DELE, RNTO,
    // COMT): once its command was read it is made even if the session
    // closes before a worker takes it, so whether it happened never hangs
    // on a thread's timing. work must not touch the session.
    void run_blocking_change(std::function<void()> work, std::function<void()> done);
    // A password check for user: as run_blocking_work, after the login
    // turn for this session's source (LoginGate).
    void run_login_check(const std::string &user, std::function<void()> work, std::function<void()> done);
    // For blocking work that can stop early (a HASH reading a large file):
    // its abort flag is set when the session closes, so a client that asks
    // and hangs up does not leave the work running on.
    std::shared_ptr<middleware::TransferProgress> cancellable_work();

    // Starts a transfer: body runs on its own thread and returns the final
    // reply; the session logs it and sends it.
    void run_transfer(std::shared_ptr<TransferJob> job, std::string what, std::function<TransferOutcome()> body);
    std::shared_ptr<TransferJob> active_transfer() const { return transfer_; }
    void abort_transfer();  // ABOR

    // Builds a job on the current data channel (consumed: one transfer each),
    // or for a framed transfer on the kept connections when there is none.
    // Fails with a 425 text when PASV/EPSV/PORT/EPRT did not come first.
    Result<std::shared_ptr<TransferJob>> take_data_channel(bool framed = false);
    // A job for a transfer without data connections (RSTR, RRTR).
    std::shared_ptr<TransferJob> new_transfer_job(std::unique_ptr<DataChannel> channel = nullptr);
    // Lets go of the session's RDMA channel; its threads and queue pairs are
    // torn down off the loop.
    void drop_rdma();
    std::string log_prefix() const;

    SessionState state;

private:
    static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
    static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
    static void on_timer(uv_timer_t *t);
    static void on_handle_closed(uv_handle_t *h);

    // Runs the complete lines; the idle timer starts again after a command,
    // or when rearm_timer (work that stopped it has ended).
    void process_lines(bool rearm_timer);
    // Sends bytes as they are (under TLS: records already made).
    void write_raw(std::string data);
    // Decrypts what arrived under TLS; false when the session ended.
    bool take_tls_input(std::string_view from_network, std::string &plain);
    void execute(const std::string &line);
    void arm_timer();
    void finish_busy();
    void refuse_for_lack_of_resources();
    // Work for a worker thread, tied to this session's life (run_blocking_work).
    struct GuardedWork {
        std::string what;
        std::function<void()> work, done, refused;
    };
    GuardedWork guard(std::function<void()> work, std::function<void()> done, bool even_if_closed = false);

    Server &server_;
    uint64_t id_;
    uv_tcp_t tcp_{};
    uv_timer_t timer_{};
    int open_handles_ = 0;
    std::atomic<bool> closed_{false};  // read by work threads to skip work nobody waits for
    bool busy_ = false;          // blocking work or a transfer in progress
    bool closing_ = false;       // the last reply is said (QUIT, 421): no further command runs
    bool abort_requested_ = false;
    sockaddr_storage peer_{}, local_{};
    uint64_t login_deadline_ms_ = 0;  // loop time by which USER/PASS must have succeeded
    char read_buffer_[16384];
    bool tls_required_ = false;
    bool implicit_tls_ = false;
    std::unique_ptr<middleware::tls::MemoryTls> tls_;
    middleware::tls::SharedSslCtx tls_ctx_;     // the context this session's TLS began on
    middleware::tls::BindingTag tls_tag_{};     // binds data connections to it (session_binding.h)
    std::optional<middleware::tls::BindingTag> tls_inherited_tag_;  // when its TLS resumed an earlier session
    bool tls_logged_ = false;
    ftp::TelnetFilter telnet_;
    ftp::LineReader lines_;
    std::deque<std::string> waiting_lines_;  // commands that arrived while busy
    std::string executing_;  // "command=VERB argument=..." of the command last run: names its work
    std::shared_ptr<TransferJob> transfer_;
    std::shared_ptr<middleware::TransferProgress> work_cancel_;  // cancellable_work()
    std::shared_ptr<Session> self_while_open_;  // keeps us alive until libuv closed our handles
};

}  // namespace rftp::daemon
