#include "client/transfer/tcp_transport.h"

#include <sys/socket.h>

#include <cerrno>

#include "client/data_connection.h"
#include "client/interrupt.h"
#include "client/transfer/transfer_control.h"

namespace rftp::client {

middleware::ConnectionEnd framed_connection_end(const Session &session) {
    return keeps_data_connections(session) ? middleware::ConnectionEnd::keep_open : middleware::ConnectionEnd::shut_down;
}

OutcomeStatus TcpTransport::connect(Session &session) {
    session_ = &session;
    keep_ = framed_ && keeps_data_connections(session);
    // Connections a transfer started ahead ran on are gone: ABOR closed them.
    if (session.control.take_abandoned_transfer()) session.kept_data.clear();
    if (keep_ && session.kept_data.size() == streams_) {
        auto kept = std::exchange(session.kept_data, {});
        connections_ = std::move(kept.plain);
        relays_ = std::move(kept.relays);  // under PROT P: their TLS is up
        for (const auto &r : relays_) fds_.push_back(r->engine_fd());
    } else {
        auto connections = open_data_connections(session, streams_);
        if (!connections) return std::unexpected(connections.error());
        connections_ = std::move(*connections);
    }
    for (const auto &c : connections_) fds_.push_back(c.get());
    return {};
}

OutcomeStatus TcpTransport::started(Session &session) {
    if (!relays_.empty()) return {};  // kept, secured already
    auto relays = secure_data_connections(session, connections_);
    if (!relays) return std::unexpected(relays.error());
    if (relays->empty()) return {};
    relays_ = std::move(*relays);
    finish_ms_ = session.control.timeout() * 1000;
    connections_.clear();
    fds_.clear();
    for (const auto &r : relays_) fds_.push_back(r->engine_fd());
    return {};
}

Status TcpTransport::move(middleware::TransferProgress &progress) {
    Status moved = checked_move(progress);
    // Only connections that carried a whole file, and their TLS, are kept.
    moved_ = moved.has_value() && !client::interrupted();
    return moved;
}

Status TcpTransport::checked_move(middleware::TransferProgress &progress) {
    Status moved = move_(fds_, progress);
    if (!moved || relays_.empty()) return moved;
    for (const auto &r : relays_) {
        // An end of stream without close_notify may be an attacker's cut.
        if (r->cut_short()) return fail_msg("data connection: " + r->failure(), -ECONNRESET);
    }
    // A Ctrl-C that came as the last bytes went: no close_notify vouches for it.
    if (client::interrupted()) return fail_msg("interrupted", -EINTR);
    // Kept, the file ended with its EOD frames, and the TLS stays up.
    if (keep_) return moved;
    // The end of stream as close_notify, once every byte before it went:
    // an upload's end, and a download's acknowledgement. Only here: an
    // interrupt that shuts the connections down sends none (tls_relay.h).
    for (const auto &r : relays_) r->finish_sending();
    for (const auto &r : relays_)
        if (auto done = r->finish(finish_ms_); !done) return done;
    return moved;
}

void TcpTransport::finish(FileReport &report) {
    // Kept only until the reply: run_transfer lets them go unless it is 226.
    // These just carried a whole file: no ABOR of an earlier transfer sent
    // ahead concerns them.
    report.tls_path = middleware::tls::tls_path_of(relays_);
    if (keep_ && moved_) {
        session_->kept_data = {.plain = std::move(connections_), .relays = std::move(relays_)};
        (void)session_->control.take_abandoned_transfer();
    }
    // Closing the data connections is what tells a plain-stream server an
    // upload ended.
    relays_.clear();
    connections_.clear();
    fds_.clear();
    report.streams = streams_;
}

std::unexpected<Failure> TcpTransport::failed(Session &session, const Error &error, const std::string &what) {
    const ExitCode ours = exit_for_data_error(error);
    ftp::Reply why;  // code 0: none read
    if (side_ == Side::upload || -error.code == ECONNRESET) why = session.control.read_reply(2).value_or(ftp::Reply{});
    const bool server_refused = why.code >= 400;
    // The reply was read: no ABOR. Otherwise ABOR, so that a reply still to
    // come is not taken for the next command's.
    if (!server_refused) abort_transfer(session);
    // Not for a failure of our own (the source could not be read, or
    // shrank): the server then only saw the data stop, and its 426 says less.
    if (server_refused && (side_ == Side::download || ours == ExitCode::transfer)) return refused(what, why);
    return std::unexpected(Failure{ours, what + ": " + error.message});
}

TcpTransport::MoveOver plain_send(int fd, uint64_t offset, uint64_t end) {
    return [=](std::span<const int> fds, middleware::TransferProgress &progress) {
        return middleware::send_stream(fds[0], fd, offset, end, progress);
    };
}

TcpTransport::MoveOver framed_send(middleware::ParallelSendPlan plan, std::optional<std::string> &sha256) {
    return [plan, &sha256](std::span<const int> fds, middleware::TransferProgress &progress) -> Status {
        auto sent = middleware::send_parallel(fds, plan, progress);
        if (!sent) return fail(sent.error());
        sha256 = sent->sha256;
        return {};
    };
}

TcpTransport::MoveOver plain_receive(PlainReceive spec, uint64_t &end) {
    return [spec, &end](std::span<const int> fds, middleware::TransferProgress &progress) -> Status {
        auto received = middleware::receive_stream(fds[0], spec.fd, spec.offset, progress, true, spec.kept,
                                                   spec.placement, spec.on_prefix_grown);
        if (!received) return fail(received.error());
        end = *received;
        return {};
    };
}

TcpTransport::MoveOver framed_receive(middleware::ParallelReceivePlan plan, middleware::RangeSet &received,
                                      std::optional<std::string> &sha256, uint64_t &end) {
    return [plan, &received, &sha256, &end](std::span<const int> fds, middleware::TransferProgress &progress) -> Status {
        auto r = middleware::receive_parallel(fds, plan, received, progress);
        if (r) sha256 = r->sha256;
        end = received.contiguous_end();
        if (!r) return fail(r.error());
        if (r->size != plan.max_size)
            return fail_msg("streams announced size " + std::to_string(r->size) + ", SIZE said " +
                                std::to_string(plan.max_size) + " (the file changed on the server)",
                            kFileChanged);
        if (!received.covers_exactly(r->size)) return fail_msg("streams left holes in the file");
        return {};
    };
}

}  // namespace rftp::client
