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

    // On the transfer thread: opens n data connections, then sends the
    // preliminary reply (150) to the client through the loop.
    Result<std::vector<int>> open_connections(int n, const std::string &preliminary_text);
    // On the transfer thread, for a transfer without data connections (RDMA): the 150 alone.
    void preliminary(const std::string &text) { send_reply_(150, text); }

    // From the loop: stop at the next chance.
    void abort();
    // Whether the client (ABOR) or the session's end stopped it. Not
    // progress.abort: a mover also raises that to stop its sibling streams
    // after a failure of its own (a full disk), which must be reported as that.
    bool aborted() const { return abort_requested_.load(); }

    middleware::TransferProgress progress;

private:
    std::unique_ptr<DataChannel> channel_;
    sockaddr_storage peer_;
    std::optional<wire::Token> data_token_;
    unsigned timeout_s_;
    std::function<void(int, std::string)> send_reply_;
    std::mutex mutex_;
    std::vector<UniqueFd> sockets_;
    std::atomic<bool> abort_requested_{false};
};

// Error::code a transfer body uses for "the data connections never opened" (reply 425).
inline constexpr int kDataConnectionNotOpened = -ENOTCONN - 1000;

// The reply for a transfer whose data connections never opened (425).
TransferOutcome open_failed_outcome(const Error &e, bool aborted);
// The reply for a transfer that failed once under way, from the error that ended it.
TransferOutcome failed_outcome(const Error &e, bool aborted, uint64_t bytes);

}  // namespace rftp::daemon
