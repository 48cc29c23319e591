#include "client/transfer/transfer_control.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <string>

#include "client/data_connection.h"

namespace rftp::client {

bool grant_exceeds_request(uint64_t asked_streams, uint64_t asked_block, uint64_t streams, uint64_t block) {
    constexpr uint64_t kServersSmallestBlock = 64u << 10;  // rftpd raises smaller requests to this
    return streams > asked_streams || block > std::max(asked_block, kServersSmallestBlock);
}

namespace {

// rftpd's DATAKEEP, asked once, with the session's first OPTS PARALLEL:
// both lines go out before either reply is read, so it costs no round
// trip. A refusal is no failure: connections are then opened per file.
// UNECHOED too where offered: a file of one block then costs no echo.
bool asks_data_keep(const Session &session, unsigned streams) {
    return streams >= 1 && !session.data_keep_asked && session.features.data_keep && session.features.is_rftpd() &&
           keeps_under_this_protection(session);
}

// Without connections kept (under PROT P, say), the transfer opens its
// connections next: rftpd's EPSV then shares the OPTS PARALLEL round trip.
bool opens_connections_next(const Session &session) {
    return session.features.is_rftpd() && session.kept_data.empty() && !session.control.has_lines_ahead();
}

Outcome<ftp::Reply> parallel_request(Session &session, unsigned streams, uint64_t block_size) {
    const std::string request = "OPTS " + ftp::format_parallel_request({.streams = streams, .block_size = block_size});
    if (!asks_data_keep(session, streams)) {
        if (!opens_connections_next(session)) return session.control.command(request);
        if (auto sent = session.control.send(request); !sent) return std::unexpected(sent.error());
        if (auto sent = send_data_setup_ahead(session); !sent) return std::unexpected(sent.error());
        return session.control.read_reply();
    }
    session.data_keep_asked = true;
    const bool unechoed = session.features.data_keep_unechoed;
    if (auto sent = session.control.send(unechoed ? "OPTS DATAKEEP ON UNECHOED" : "OPTS DATAKEEP ON"); !sent)
        return std::unexpected(sent.error());
    if (auto sent = session.control.send(request); !sent) return std::unexpected(sent.error());
    // The session's first framed transfer opens its connections next: their
    // set-up lines share this round trip.
    if (auto sent = send_data_setup_ahead(session); !sent) return std::unexpected(sent.error());
    auto keep = session.control.read_reply();
    if (!keep) return std::unexpected(keep.error());
    session.data_keep = keep->code == 200;
    session.data_keep_unechoed = session.data_keep && unechoed && keep->text().ends_with("UNECHOED");
    return session.control.read_reply();
}

}  // namespace

Outcome<ParallelGrant> negotiate_parallel(Session &session, unsigned streams, uint64_t block_size) {
    if (session.parallel_in_force && session.parallel_asked_streams == streams && session.parallel_asked_block == block_size)
        return ParallelGrant{session.parallel_granted_streams, session.parallel_granted_block};
    // Kept connections of another count go now, closed from this side
    // first (connection_end.h), as rftpd will close its side on this OPTS.
    // rftpd grants at most the streams its FEAT names.
    const unsigned expected = session.features.parallel_max ? std::min(streams, session.features.parallel_max) : streams;
    if (session.kept_data.size() != expected) session.kept_data.clear();
    auto reply = parallel_request(session, streams, block_size);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 200) return refused("OPTS PARALLEL", *reply);
    auto grant = ftp::parse_parallel_grant(reply->text());
    if (!grant) return fail_as(ExitCode::remote_file, "OPTS PARALLEL: unreadable reply '" + reply->text() + "'");
    if (grant_exceeds_request(streams, block_size, grant->streams, grant->block_size))
        return fail_as(ExitCode::remote_file, "OPTS PARALLEL: the server granted more than was asked ('" +
                                                  reply->text() + "' for " + std::to_string(streams) + " streams of " +
                                                  std::to_string(block_size) + " bytes)");
    session.parallel_in_force = true;
    // Kept connections serve only transfers of as many streams; rftpd
    // closes them on its side by the same rule (docs/protocol.md).
    if (session.kept_data.size() != grant->streams) session.kept_data.clear();
    session.parallel_asked_streams = streams;
    session.parallel_asked_block = block_size;
    session.parallel_granted_streams = grant->streams;
    session.parallel_granted_block = grant->block_size;
    return *grant;
}

OutcomeStatus disable_parallel(Session &session) {
    if (!session.parallel_in_force) return {};
    auto reply = session.control.command("OPTS " + ftp::format_parallel_request({.streams = 0}));
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 200) return refused("OPTS PARALLEL 0", *reply);
    session.parallel_in_force = false;
    session.kept_data.clear();
    return {};
}

void abort_transfer(Session &session) {
    // Until both answers are read, a late one would be taken for the next
    // command's reply: the session is out of step unless shown otherwise.
    session.out_of_step = true;
    if (!session.control.send("ABOR")) return;
    // Typically 426 for the aborted transfer, then 226 for the ABOR itself.
    // But the transfer may have ended before the ABOR came (its own 226 or
    // 4xx), and then the ABOR's answer (225) still follows: it must be read
    // here, or the next command would take it for its own reply.
    auto first = session.control.read_reply(5);
    if (!first) return;
    if (first->code == 225) {
        session.out_of_step = false;
        return;
    }
    // 5xx: a server without ABOR may refuse it at once while the transfer's
    // own reply is still to come, or say it after that reply; either way
    // one more reply ends the exchange.
    session.out_of_step = !session.control.read_reply(first->code == 226 ? 1 : 5);
}

ExitCode exit_for_data_error(const Error &error) {
    if (error.code == kFileChanged) return ExitCode::verification;
    // A block that failed its CRC32C (EBADMSG) was damaged on the way, not
    // here: a transfer failure, resumable, like a broken connection.
    switch (-error.code) {
        case ENOSPC: case EDQUOT: case EFBIG: case EIO: case EROFS: case ESTALE: case EBADF: case EISDIR:
            return ExitCode::local_file;
        default:
            return ExitCode::transfer;
    }
}

// 100 GB: about 35 minutes more than --timeout.
int timeout_after_reading(const Session &session, std::optional<uint64_t> bytes) {
    constexpr uint64_t kSlowestRead = 50'000'000;
    uint64_t seconds = static_cast<uint64_t>(session.control.timeout()) + (bytes ? *bytes / kSlowestRead : 0);
    return static_cast<int>(std::min<uint64_t>(seconds, INT_MAX / 1000));
}

void note_blocks_resent(FileReport &report, const middleware::TransferProgress &progress) {
    const uint64_t n = progress.blocks_resent.load();
    if (n == 0) return;
    report.note(std::to_string(n) + (n == 1 ? " block" : " blocks") +
                " failed the CRC32C check on the way and " + (n == 1 ? "was" : "were") + " sent again");
}

OutcomeStatus hold_next_upload(Session &session) {
    auto held = session.control.command("HOLD");
    if (!held) return std::unexpected(held.error());
    if (held->code != 200) return refused("HOLD", *held);
    return {};
}

}  // namespace rftp::client
