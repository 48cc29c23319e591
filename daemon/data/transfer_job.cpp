#include "daemon/data/transfer_job.h"

#include <cerrno>

#include "common/log.h"
#include "common/socket_address.h"
#include "middleware/tls/handshake.h"
#include "middleware/tls/kernel_tls.h"
#include "middleware/tls/tls_error.h"

namespace rftp::daemon {

Result<std::vector<int>> TransferJob::open_connections(int n, const std::string &preliminary_text) {
    if (!channel_) return fail_msg("no data channel");
    if (!relays_.empty()) return kept_tls_connections(n, preliminary_text);
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
    if (!tls_) return fds;
    if (auto secured = secure_connections(); !secured) return fail(secured.error());
    fds.clear();
    std::lock_guard lock(mutex_);
    for (auto &r : relays_) fds.push_back(r->engine_fd());
    return fds;
}

// Kept connections under PROT P: their TLS is up, and their number must be
// the transfer's, as for kept plain ones (DataChannel::kept).
Result<std::vector<int>> TransferJob::kept_tls_connections(int n, const std::string &preliminary_text) {
    std::vector<int> fds;
    {
        std::lock_guard lock(mutex_);
        if (relays_.size() != static_cast<std::size_t>(n)) {
            const std::size_t kept = relays_.size();
            relays_.clear();
            return fail_msg(std::to_string(kept) + " data connections are kept, the transfer needs " +
                            std::to_string(n));
        }
        for (auto &r : relays_) fds.push_back(r->engine_fd());
        if (progress.abort.load())
            for (auto &r : relays_) r->stop();
    }
    send_reply_(150, preliminary_text);
    return fds;
}

// The TLS handshake on each data connection, then a relay for the engine.
Status TransferJob::secure_connections() {
    std::vector<UniqueFd> network;
    {
        std::lock_guard lock(mutex_);
        network = std::move(sockets_);
        sockets_.clear();
    }
    for (auto &sock : network) {
        middleware::tls::UniqueSsl ssl(SSL_new(tls_->ctx.get()));
        if (!ssl) return fail(middleware::tls::tls_error("TLS data connection"));
        SSL_set_accept_state(ssl.get());
        // No TLS 1.3 tickets here: a client that only sends (an upload) never
        // reads them, and closing with them unread resets the connection,
        // which can cost the data still on its way to us. (Its tag is
        // checked below, never set: session_binding.h.)
        SSL_set_num_tickets(ssl.get(), 0);
        middleware::tls::offer_kernel_tls(ssl.get());
        auto shaken = middleware::tls::handshake(ssl.get(), sock.get(), static_cast<int>(timeout_s_) * 1000, &progress.abort);
        if (!shaken) return fail(Error{kDataTlsRefused, "TLS on the data connection failed: " + shaken.error().message});
        const bool bound = middleware::tls::resumed_with_tag(ssl.get(), tls_->tag) ||
                           (tls_->inherited && middleware::tls::resumed_with_tag(ssl.get(), *tls_->inherited));
        if (tls_->must_resume && !bound) {
            log::warning("event=data_connection_refused peer=" + address_text(peer_) +
                         " reason=\"its TLS did not resume the control connection's session\"");
            return fail(Error{kDataTlsRefused, "the data connection's TLS must resume the control connection's TLS "
                                               "session (tls.data_binding: session)"});
        }
        auto relay = middleware::tls::TlsRelay::start(std::move(ssl), std::move(sock), timeout_s_);
        if (!relay) return fail(relay.error());
        std::lock_guard lock(mutex_);
        relays_.push_back(std::move(*relay));
        if (progress.abort.load()) relays_.back()->stop();
    }
    return {};
}

std::string TransferJob::tls_path() {
    std::lock_guard lock(mutex_);
    return middleware::tls::tls_path_of(relays_);
}

Status TransferJob::check_clean_end() const {
    for (const auto &r : relays_)
        if (r->cut_short())
            return fail_msg("the TLS data connection ended without close_notify, so the upload may be cut short" +
                                (r->failure().empty() ? std::string() : " (" + r->failure() + ")"),
                            -ECONNRESET);
    return {};
}

Status TransferJob::finish_connections() {
    std::vector<middleware::tls::TlsRelay *> relays;
    {
        std::lock_guard lock(mutex_);
        for (auto &r : relays_) relays.push_back(r.get());
    }
    for (auto *r : relays) r->finish_sending();
    for (auto *r : relays)
        if (auto done = r->finish(static_cast<int>(timeout_s_) * 1000); !done) return done;
    return {};
}

middleware::tls::KeptConnections TransferJob::release_connections() {
    std::lock_guard lock(mutex_);
    return {.plain = std::move(sockets_), .relays = std::move(relays_)};
}

void TransferJob::abort() {
    abort_requested_.store(true);
    progress.abort.store(true);
    if (channel_) channel_->cancel();
    std::lock_guard lock(mutex_);
    for (auto &s : sockets_) ::shutdown(s.get(), SHUT_RDWR);
    for (auto &r : relays_) r->stop();
}

TransferOutcome open_failed_outcome(const Error &e, bool aborted) {
    if (aborted) return failed_outcome(e, true, 0);
    if (e.code == kDataTlsRefused) return {522, "Data connection refused: " + e.message + ".", 0, "failed"};
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
