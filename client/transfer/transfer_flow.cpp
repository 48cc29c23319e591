#include "client/transfer/transfer_flow.h"

#include "client/interrupt.h"
#include "client/transfer/transfer_control.h"

namespace rftp::client {
namespace {

// REST offset; what to send instead of STOR when the server refused it
// and APPE may stand in.
Outcome<std::string> restart_at(Session &session, const TransferCommand &command) {
    if (command.offset == 0) return command.verb;
    auto rest = session.control.command("REST " + std::to_string(command.offset));
    if (!rest) return std::unexpected(rest.error());
    if (rest->code == 350) return command.verb;
    if (command.append_if_rest_refused) return std::string("APPE");
    return refused("server cannot resume (REST)", *rest);
}

// What readies the transfer command, each right before it so no other
// command can leave it pending for a later one: ALLO, then HOLD.
OutcomeStatus ready_the_command(Session &session, const TransferCommand &command, const std::string &verb,
                                const std::string &transfer_line) {
    if (command.allocate && verb == "STOR") {
        // rftpd reserves the file's space before its 150, so a disk without
        // room says 452 now, not after a terabyte. Other servers mostly
        // answer 202 (not needed); any answer is fine. To rftpd, without a
        // HOLD to come between, the STOR goes in the same write: no round
        // trip. (A many-file run may have sent both ahead already.)
        const std::string allo = "ALLO " + std::to_string(*command.allocate);
        if (session.features.is_rftpd() && !command.hold && !session.control.has_lines_ahead())
            if (auto sent = session.control.send_ahead({allo, transfer_line}); !sent) return sent;
        auto reply = session.control.command(allo);
        if (!reply) return std::unexpected(reply.error());
    }
    if (command.hold) return hold_next_upload(session);
    return {};
}

Status move_watched(DataPath &transport, middleware::TransferProgress &progress, const TransferCommand &command,
                    const FileProgressHooks &hooks) {
    const std::vector<int> fds = transport.interruptible();
    InterruptGuard guard(progress, fds);
    ProgressView view = hooks.per_file;
    view.protection = transport.protection();
    ProgressReporter reporter(view, progress, command.offset, command.size);
    BatchProgress::Watch watch(hooks.batch, progress);
    return transport.move(progress);
}

}  // namespace

OutcomeStatus run_transfer(Session &session, DataPath &transport, const TransferCommand &command,
                           const FileProgressHooks &hooks, FileReport &report) {
    auto verb = restart_at(session, command);
    if (!verb) return std::unexpected(verb.error());
    if (auto connected = transport.connect(session); !connected) return connected;
    const std::string transfer_line = *verb + " " + command.remote;
    if (auto ready = ready_the_command(session, command, *verb, transfer_line); !ready) return ready;
    auto started = session.control.command(transfer_line, command.start_timeout);
    if (!started) return std::unexpected(started.error());
    if (!started->positive_preliminary()) return refused(command.what, *started);
    if (auto ready = transport.started(session); !ready) {
        abort_transfer(session);
        return ready;
    }
    // Kept connections carry the next file as soon as this one's 226 is
    // out: its commands go now, and wait at the server behind this transfer.
    if (transport.keeps_connections() && hooks.send_next_ahead) hooks.send_next_ahead(session);

    middleware::TransferProgress progress;
    Status moved = move_watched(transport, progress, command, hooks);
    transport.finish(report);
    report.bytes = progress.bytes.load();
    note_blocks_resent(report, progress);
    if (interrupted()) {
        session.kept_data.clear();
        transport.interrupted(session);
        abort_transfer(session);
        return fail_as(ExitCode::interrupted, "interrupted");
    }
    if (!moved) {
        auto failure = transport.failed(session, moved.error(), command.what);
        // Had the server ended the transfer before this side gave up, it
        // ran the lines sent ahead too, and the replies just read may be
        // theirs: which reply answers what is unknown, so no reuse.
        if (session.control.has_lines_ahead()) session.out_of_step = true;
        return failure;
    }
    auto done = session.control.read_reply();
    // Kept connections serve the next file only after a 226 (docs/protocol.md).
    if (!done || done->code != 226) session.kept_data.clear();
    if (!done) return std::unexpected(done.error());
    if (!done->positive_completion()) return refused(command.what, *done);
    return {};
}

}  // namespace rftp::client
