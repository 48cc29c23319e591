#include "daemon/data/transfer_job.h"

#include <cerrno>

namespace rftp::daemon {

Result<std::vector<int>> TransferJob::open_connections(int n, const std::string &preliminary_text) {
    if (!channel_) return fail_msg("no data channel");
    auto socks = channel_->open(n, peer_, data_token_, timeout_s_);
    if (!socks) return fail(socks.error());
    std::vector<int> fds;
    {
        std::lock_guard lock(mutex_);
        for (auto &s : *socks) {
            fds.push_back(s.get());
            sockets_.push_back(std::move(s));
        }
        // An abort that raced with accept must still reach these sockets.
        if (progress.abort.load())
            for (auto &s : sockets_) ::shutdown(s.get(), SHUT_RDWR);
    }
    send_reply_(150, preliminary_text);
    return fds;
}

void TransferJob::abort() {
    abort_requested_.store(true);
    progress.abort.store(true);
    if (channel_) channel_->cancel();
    std::lock_guard lock(mutex_);
    for (auto &s : sockets_) ::shutdown(s.get(), SHUT_RDWR);
}

TransferOutcome open_failed_outcome(const Error &e, bool aborted) {
    if (aborted) return failed_outcome(e, true, 0);
    return {425, "Can't open data connection: " + e.message + ".", 0, "failed"};
}

TransferOutcome failed_outcome(const Error &e, bool aborted, uint64_t bytes) {
    TransferOutcome out;
    out.bytes = bytes;
    if (aborted) {
        out.code = 426;
        out.text = "Transfer aborted.";
        out.result = "aborted";
        return out;
    }
    out.result = "failed";
    switch (e.kind) {
        case ErrorKind::busy:
            out.code = 450;
            out.text = "File busy: " + e.message + ".";
            return out;
        case ErrorKind::reserved_name:
            out.code = 553;
            out.text = "File name not allowed: " + e.message + ".";
            return out;
        case ErrorKind::bad_offset:
            out.code = 554;
            out.text = "Invalid REST parameter: " + e.message + ".";
            return out;
        case ErrorKind::system:
            break;
    }
    if (e.code == kFileChanged) {
        // Not the disk failing: someone changed the file. A resume finds
        // that out too (its size or time differs) and starts over.
        out.code = 451;
        out.text = "Requested action aborted: the file changed while it was being sent: " + e.message + ".";
        return out;
    }
    switch (-e.code) {
        case ETIMEDOUT:
            out.code = 426;
            out.text = "Data connection stalled; transfer aborted: " + e.message + ".";
            break;
        case ENOSPC:
        case EDQUOT:
            out.code = 452;
            out.text = "Insufficient storage space: " + e.message + ".";
            break;
        case EAGAIN:
            // Not the client's doing: a thread (or another resource) the
            // transfer needed could not be had just now.
            out.code = 451;
            out.text = "Requested action aborted: " + e.message + "; try again later.";
            break;
        case EIO:
        case EROFS:
        case ESTALE:
            // This host's file system failed (the network's failures carry
            // their own codes): RFC 959's local error, not a broken data
            // connection, so the operator looks at the disk.
            out.code = 451;
            out.text = "Requested action aborted: local error in processing: " + e.message + ".";
            break;
        case EFBIG:
            out.code = 552;
            out.text = "File too large: " + e.message + ".";
            break;
        default:
            out.code = 426;
            out.text = "Connection closed; transfer aborted: " + e.message + ".";
    }
    return out;
}

}  // namespace rftp::daemon
