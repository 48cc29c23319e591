// One data transfer (RETR, STOR, APPE, LIST, NLST, MLSD, and RSTR, RRTR over
// an RDMA channel, which have no data connections) while it runs on its own
// thread. The loop keeps a shared_ptr to it so ABOR, QUIT or a closing
// session can stop it: abort() wakes every blocking call the thread may be in.
// Sockets stay open until the job is destroyed (on the loop, after the thread
// ended), so abort() never touches a file descriptor number that was reused.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/data/transfer_digest.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "daemon/data/data_channel.h"
#include "daemon/data/upload_target.h"
#include "middleware/tls/kept_connections.h"
#include "middleware/tls/openssl_handles.h"
#include "middleware/tls/session_binding.h"
#include "middleware/tls/tls_relay.h"
#include "middleware/transfer_progress.h"
#include "protocol/token.h"

namespace rftp::daemon {

// How the transfer ended: the final reply, and what the transfer log says.
struct TransferOutcome {
    int code = 226;
    std::string text = "Transfer complete.";
    uint64_t bytes = 0;
    std::string result = "ok";  // ok, aborted, failed
    std::string detail;         // extra key=value fields for the transfer log line
    std::optional<TransferDigest> digest;  // the file's SHA-256, when taken during the transfer
    std::shared_ptr<UploadTarget> held;    // a complete upload HOLD kept aside (not renamed into place)
    bool keep_connections = false;         // DATAKEEP: on 226 the data connections serve the next transfer
};

// PROT P: each data connection is a TLS server connection on ctx and, with
// must_resume, must resume the control connection's session (tag).
struct DataTls {
    middleware::tls::SharedSslCtx ctx;
    middleware::tls::BindingTag tag{};
    std::optional<middleware::tls::BindingTag> inherited;  // the resumed control session's (session_binding.h)
    bool must_resume = true;
};

class TransferJob {
public:
    // data_token: what each passive data connection must show first (OPTS DATATOKEN), if the client took one.
    TransferJob(std::unique_ptr<DataChannel> channel, const sockaddr_storage &control_peer,
                std::optional<wire::Token> data_token, unsigned timeout_s, std::function<void(int, std::string)> send_reply)
        : channel_(std::move(channel)),
          peer_(control_peer),
          data_token_(data_token),
          timeout_s_(timeout_s),
          send_reply_(std::move(send_reply)) {}

    // PROT P for this job's data connections (before open_connections).
    void protect(DataTls tls) { tls_ = std::move(tls); }
    // Kept connections under PROT P (before open_connections): their TLS
    // is up, so open_connections hands out their plain ends.
    void adopt_relays(std::vector<std::unique_ptr<middleware::tls::TlsRelay>> relays) { relays_ = std::move(relays); }
    bool protected_data() const { return tls_.has_value(); }
    // Under PROT P, once the connections were opened: who made and read
    // the data's TLS records (KernelTls::name(), "mixed" when the
    // connections differ); empty before.
    std::string tls_path();

    // On the transfer thread: opens n data connections, then sends the
    // preliminary reply (150) to the client through the loop. Under PROT P
    // the TLS handshakes follow the 150 (as clients expect); the fds
    // returned are then the relays' plain ends (tls_relay.h).
    Result<std::vector<int>> open_connections(int n, const std::string &preliminary_text);
    // On the transfer thread, after an upload's data ended: an error when a
    // TLS data connection ended without close_notify (cut short).
    Status check_clean_end() const;
    // On the transfer thread, once the transfer is done and good: under
    // TLS, its end of stream as close_notify after every byte it wrote
    // (tls_relay.h), so the final reply follows the data. A failure means
    // the data may not have left.
    Status finish_connections();
    // On the transfer thread, for a transfer without data connections (RDMA): the 150 alone.
    void preliminary(const std::string &text) { send_reply_(150, text); }

    // On the loop, after the thread ended: the data connections, for the
    // session to keep (OPTS DATAKEEP), with their TLS under PROT P. The job
    // then closes none.
    middleware::tls::KeptConnections release_connections();

    // From the loop: stop at the next chance.
    void abort();
    // Whether the client (ABOR) or the session's end stopped it. Not
    // progress.abort: a mover also raises that to stop its sibling streams
    // after a failure of its own (a full disk), which must be reported as that.
    bool aborted() const { return abort_requested_.load(); }

    middleware::TransferProgress progress;

private:
    Result<std::vector<int>> kept_tls_connections(int n, const std::string &preliminary_text);
    Status secure_connections();

    std::unique_ptr<DataChannel> channel_;
    sockaddr_storage peer_;
    std::optional<wire::Token> data_token_;
    unsigned timeout_s_;
    std::function<void(int, std::string)> send_reply_;
    std::mutex mutex_;
    std::vector<UniqueFd> sockets_;
    std::optional<DataTls> tls_;
    std::vector<std::unique_ptr<middleware::tls::TlsRelay>> relays_;  // under mutex_ once opened
    std::atomic<bool> abort_requested_{false};
};

// Error::code a transfer body uses for "the data connections never opened" (reply 425).
inline constexpr int kDataConnectionNotOpened = -ENOTCONN - 1000;
// Error::code for a PROT P data connection whose TLS failed or did not
// resume the control connection's session (reply 522, as vsftpd).
inline constexpr int kDataTlsRefused = -EPROTO - 1000;

// The reply for a transfer whose data connections never opened (425).
TransferOutcome open_failed_outcome(const Error &e, bool aborted);
// The reply for a transfer that failed once under way, from the error that ended it.
TransferOutcome failed_outcome(const Error &e, bool aborted, uint64_t bytes);

}  // namespace rftp::daemon
