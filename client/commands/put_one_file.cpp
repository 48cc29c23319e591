#include "protocol/partial_names.h"
#include "client/commands/put_one_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <optional>
#include <vector>

#include "client/commands/transfer_steps.h"
#include "client/commands/upload_resume.h"
#include "client/data_connection.h"
#include "client/interrupt.h"
#include "client/transfer/rdma_transport.h"
#include "common/log.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/stream_transfer.h"
#include "protocol/discard_path.h"
#include "protocol/source_identity.h"

namespace rftp::client {

Outcome<UploadSource> open_upload_source(const std::string &path, std::optional<uint64_t> device_size) {
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before
    // the check below could refuse it. Reads of files and devices ignore it.
    UploadSource source{path, UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)), 0};
    if (!source.fd) return fail_as(ExitCode::local_file, "open " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(source.fd.get(), &st) < 0) return fail_as(ExitCode::local_file, "stat " + path + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode) && !(S_ISCHR(st.st_mode) && device_size))
        return fail_as(ExitCode::local_file, path + " is not a regular file" +
                                                 (S_ISCHR(st.st_mode) ? " (to send from a device, give --size)" : ""));
    if (S_ISREG(st.st_mode) && device_size)
        return fail_as(ExitCode::usage, "--size is for devices such as /dev/zero, not regular files");
    // Only the open needed O_NONBLOCK; the reads that follow may wait.
    if (int flags = ::fcntl(source.fd.get(), F_GETFL); flags >= 0) ::fcntl(source.fd.get(), F_SETFL, flags & ~O_NONBLOCK);
    source.device = S_ISCHR(st.st_mode);
    source.size = source.device ? *device_size : static_cast<uint64_t>(st.st_size);
    if (!source.device) source.identity = ftp::source_token(source.size, st.st_mtim, st.st_ctim);
    return source;
}

namespace {

// A file this run wrote under its final name and then found wrong (exit 7:
// its digest, its size, or a local file that shrank under a plain stream)
// would stay there for anyone to take for the user's file. It is removed,
// as get deletes a download that fails its check. Only a file this run
// wrote: a file rftpd never committed is the old version, kept whole. So is
// one rftpd held aside (HOLD): remote is then its partial file, never in place.
std::unexpected<Failure> remove_wrong_upload(Session &session, const std::string &remote, Failure failure) {
    const std::string by_hand = "if it is still there, remove it (rftp rm) before anyone uses it";
    if (session.out_of_step) {
        failure.message += "; " + remote + " on the server may hold part of it: " + by_hand;
        return std::unexpected(failure);
    }
    auto removed = session.control.command("DELE " + remote);
    if (!removed) {
        // DELE's reply may still come. Even a Ctrl-C here keeps exit 7: the
        // file is wrong, and 130 would point to -c, which takes a remote
        // file of the full size for done.
        session.out_of_step = true;
        failure.message += "; removing " + remote + " from the server did not finish (" + removed.error().message +
                           "): " + by_hand;
    } else if (removed->positive_completion()) {
        failure.message += "; rftp removed " + remote + " from the server";
    } else {
        failure.message += "; removing " + remote + " from the server failed (" + describe(*removed) + "): " + by_hand;
    }
    return std::unexpected(failure);
}

// Whether the local file is still as it was opened (size, modification and
// change time).
bool source_unchanged(const UploadSource &source) {
    struct stat st {};
    if (!source.identity || ::fstat(source.fd.get(), &st) != 0) return false;
    return ftp::source_token(static_cast<uint64_t>(st.st_size), st.st_mtim, st.st_ctim) == *source.identity;
}

// COMT: the upload rftpd held aside, its digest right, goes in place.
OutcomeStatus put_held_in_place(Session &session, const std::string &remote, const std::string &held) {
    const std::string still = "; the upload is whole and verified, kept aside as " + held +
                              ": `rftp put -c --verify` checks it again and puts it in place";
    auto placed = session.control.command("COMT " + remote);
    if (!placed) {
        session.out_of_step = true;
        return fail_as(placed.error().exit, "put " + remote + ": COMT: " + placed.error().message + still);
    }
    if (!placed->positive_completion()) {
        Failure refusal = refused("put " + remote + ": COMT", *placed).error();
        refusal.message += still;
        return std::unexpected(refusal);
    }
    return {};
}

// --verify of a put: the server's digest against the bytes this run sent
// (taken as they were sent, or read again: the first size bytes, through
// the descriptor they were sent from, so a file that grew since or was
// replaced by a rename still compares what went). A mismatch takes the
// remote file away only where this run wrote it (not a file -c found
// complete) and the difference cannot be the local file's own change since.
// held: rftpd kept the upload aside (HOLD), so the digest is of its partial
// file, and only a match puts it in place (COMT): a wrong upload is never
// under the final name, whose old version stays whole.
OutcomeStatus verify_upload(Session &session, const std::string &remote, const UploadSource &source, bool wrote,
                            const std::optional<std::string> &taken_during_transfer = std::nullopt,
                            bool held = false) {
    const std::string where = held ? ftp::server_partial_name(remote) : remote;
    auto same = verify_digest(session, where, [&] {
        if (taken_during_transfer) return taken_local_sha256(*taken_during_transfer, source.path);
        return read_local_sha256(source.fd.get(), source.size, source.path);
    });
    if (same) return held ? put_held_in_place(session, remote, where) : same;
    Failure failure = same.error();
    if (held) failure.message += "; the upload was kept aside as " + where + ", never in place of " + remote;
    if (failure.exit != ExitCode::verification) {
        if (held) failure.message += " (`rftp put -c --verify` checks it again and puts it in place)";
        return std::unexpected(failure);
    }
    if (!wrote) return skipped_file_differs(failure, remote, "send it again");
    if (!taken_during_transfer && !source_unchanged(source)) {
        failure.message += "; " + source.path + " changed since rftp opened it, so " + where +
                           " on the server is left as it is: send it again";
        return std::unexpected(failure);
    }
    return remove_wrong_upload(session, where, failure);
}

// The source's modification time as its sending begins (a change before
// then, between the open and the transfer, is the identity checks' to see).
struct timespec modified_now(const UploadSource &source) {
    struct stat st {};
    return ::fstat(source.fd.get(), &st) == 0 ? st.st_mtim : timespec{};
}

// Rewritten while rftp sent it: the same size, a new modification time since
// the sending began. The copy may hold old bytes and new, and a digest taken
// of the bytes as they went agrees with that mix: the copy is removed as a
// wrong one (exit 7). A file that grew is let through: an appended log's
// first bytes are whole (docs/cli.md). held: the copy is rftpd's partial
// file, never in place. Nothing is kept of an upload to rftpd's /dev/null.
OutcomeStatus refuse_if_rewritten_while_sent(Session &session, const std::string &remote, const UploadSource &source,
                                             const struct timespec &sent_from, bool held) {
    struct stat st {};
    if (source.device || remote == ftp::kDiscardPath || ::fstat(source.fd.get(), &st) != 0 ||
        static_cast<uint64_t>(st.st_size) != source.size ||
        (st.st_mtim.tv_sec == sent_from.tv_sec && st.st_mtim.tv_nsec == sent_from.tv_nsec))
        return {};
    Failure failure{ExitCode::verification, source.path + " was written to while rftp sent it (its size the same, "
                                            "its modification time not): the copy may mix old bytes and new; send it "
                                            "again once nothing writes to it"};
    if (held) failure.message += "; it was kept aside, never in place of " + remote;
    return remove_wrong_upload(session, held ? ftp::server_partial_name(remote) : remote, failure);
}

OutcomeStatus put_once(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                       const FileProgressHooks &hooks, FileReport &report) {
    if (o.verify && source.device) return refuse_verify_of_device("source");
    if (auto ok = refuse_name_ftp_cannot_carry("put", remote); !ok) return ok;
    if (o.verify && remote == ftp::kDiscardPath && session.features.is_rftpd())
        return fail_as(ExitCode::usage, std::string("--verify: rftpd keeps nothing of an upload to ") +
                                            ftp::kDiscardPath + " to compare; leave out --verify");
    const uint64_t size = source.size;
    uint64_t offset = 0;
    uint64_t copied_first = 0;
    if (o.resume) {
        auto found = resume_offset(report, session, remote, source);
        if (!found) return std::unexpected(found.error());
        if (!*found) {
            report.skipped = true;
            report.note(remote + " already has all " + std::to_string(size) + " bytes");
            if (o.verify) return verify_upload(session, remote, source, false);
            return {};
        }
        offset = (*found)->offset;
        copied_first = (*found)->copied_first;
        if (offset > 0) report.note(remote + ": resuming at byte " + std::to_string(offset));
    }
    const struct timespec sent_from = modified_now(source);
    // With --verify, rftpd keeps the upload aside until its digest is known
    // right: over RDMA or framed streams (a plain stream's checks after it
    // assume a file in place).
    bool hold = o.verify && session.features.hold;
    auto rdma_channel = rdma_channel_for(session, o, report);
    if (!rdma_channel) return std::unexpected(rdma_channel.error());
    // After the channel's setup: an RDMA channel given up on (ABOR) would
    // drop it, and the fallback's STOR would record no source.
    if (records_source(session, source)) {
        // For the transfer command that follows (RSTR or STOR), like REST
        // and ALLO. A refusal only means a later resume cannot compare.
        auto named = session.control.command("SRCE " + *source.identity);
        if (!named) return std::unexpected(named.error());
    }
    if (*rdma_channel) {
        auto sent = put_over_rdma(session, **rdma_channel, {source.fd.get(), offset, size, copied_first, hold}, remote,
                                  hooks, report, o.verify);
        if (!sent) return sent;
        if (auto same = refuse_if_rewritten_while_sent(session, remote, source, sent_from, hold); !same) return same;
        if (o.verify) return verify_upload(session, remote, source, true, report.sha256, hold);
        return {};
    }
    report.transport = "tcp";

    unsigned streams = 1;
    uint64_t block = o.block_size;
    // Against rftpd every upload is framed, even on one stream: the frames
    // announce the file's size, so a client that dies mid-upload can never
    // leave a truncated file under the final name (a plain stream's end looks
    // the same as a crash's).
    bool framed = session.features.parallel;
    if (o.parallel > 1 && !framed) report.note("server does not offer PARALLEL; using one stream");
    if (framed) {
        unsigned wanted = o.parallel;
        if (wanted > 1 && size - offset <= o.block_size) {
            report.note("file fits in one block; using one stream");
            wanted = 1;
        }
        auto grant = negotiate_parallel(session, wanted, o.block_size);
        if (!grant) return std::unexpected(grant.error());
        streams = grant->streams;
        block = grant->block_size;
    }
    std::string verb = "STOR";
    if (offset > 0) {
        auto rest = session.control.command("REST " + std::to_string(offset));
        if (!rest) return std::unexpected(rest.error());
        if (rest->code != 350) {
            if (session.features.is_rftpd() || framed) return refused("server cannot resume (REST)", *rest);
            verb = "APPE";  // the remote file holds exactly the first offset bytes
        }
    }
    auto socks = open_data_connections(session, streams);
    if (!socks) return std::unexpected(socks.error());
    if (verb == "STOR" && size - offset >= kAnnounceSizeFrom) {
        // ALLO (RFC 959), right before the STOR it is for: rftpd reserves
        // the file's space before its 150, so a disk without room says 452
        // now, not after a terabyte. Other servers mostly answer 202 (not
        // needed); any answer is fine.
        auto allo = session.control.command("ALLO " + std::to_string(size));
        if (!allo) return std::unexpected(allo.error());
    }
    hold = hold && framed;
    if (hold)
        if (auto held = hold_next_upload(session); !held) return held;
    auto started = session.control.command(verb + " " + remote, timeout_after_reading(session, copied_first));
    if (!started) return std::unexpected(started.error());
    if (!started->positive_preliminary()) return refused("put " + remote, *started);

    std::vector<int> fds;
    for (auto &s : *socks) fds.push_back(s.get());
    middleware::TransferProgress progress;
    Status moved;
    {
        InterruptGuard guard(progress, fds);
        ProgressReporter reporter(hooks.per_file, progress, offset, size);
        BatchProgress::Watch watch(hooks.batch, progress);
        if (!framed) {
            moved = middleware::send_stream(fds[0], source.fd.get(), offset, size, progress);
        } else {
            middleware::ParallelSendPlan plan{.file_fd = source.fd.get(),
                                              .start = offset,
                                              .size = size,
                                              .block_size = static_cast<uint32_t>(block),
                                              .block_checksums = session.block_checksums,
                                              .kept = session.stream_kept.get(),
                                              .digest = o.verify};
            auto sent = middleware::send_parallel(fds, plan, progress);
            if (!sent) moved = fail(sent.error());
            else report.sha256 = sent->sha256;
        }
    }
    // Closing the data connection is what tells a plain-stream server the file ended.
    socks->clear();
    report.streams = streams;
    report.bytes = progress.bytes.load();
    note_blocks_resent(report, progress);
    if (interrupted()) {
        abort_transfer(session);
        return fail_as(ExitCode::interrupted, "interrupted");
    }
    if (!moved) {
        // The server may have ended the transfer itself and said why (452: its
        // disk is full): that reason beats our "Broken pipe". Not our own
        // failure, though (the source could not be read, or shrank): the
        // server then only saw the data stop, and its 426 says less.
        const ExitCode ours = exit_for_data_error(moved.error());
        auto why = session.control.read_reply(2);
        if (why && why->code >= 400 && ours == ExitCode::transfer) return refused("put " + remote, *why);
        if (!why || why->code < 400) abort_transfer(session);
        Failure failure{ours, "put " + remote + ": " + moved.error().message};
        // A plain stream's server stored what came under the final name.
        if (ours == ExitCode::verification && !framed) return remove_wrong_upload(session, remote, failure);
        return std::unexpected(failure);
    }
    auto done = session.control.read_reply();
    if (!done) return std::unexpected(done.error());
    if (!done->positive_completion()) return refused("put " + remote, *done);

    // A framed upload's 226 already means rftpd received exactly [offset, size)
    // (docs/protocol.md); a plain stream's end proves nothing, so ask.
    if (session.features.size && !framed) {
        auto stored = probe_size(session, remote);
        if (!stored) return std::unexpected(stored.error());
        if (stored->size && *stored->size != size) {
            Failure mismatch{ExitCode::verification, "put " + remote + ": server holds " +
                                                         std::to_string(*stored->size) + " bytes, local file has " +
                                                         std::to_string(size)};
            // Short: part of what was sent. Longer is not this run's alone (a
            // server that appends, or stores uploads under another name and
            // reports the old file): it stays, for the user to judge.
            if (*stored->size < size) return remove_wrong_upload(session, remote, mismatch);
            mismatch.message += "; it is left as it is: check it, and remove it (rftp rm) if it is this upload's";
            return std::unexpected(mismatch);
        }
    }
    if (auto same = refuse_if_rewritten_while_sent(session, remote, source, sent_from, hold); !same) return same;
    if (o.verify) return verify_upload(session, remote, source, true, report.sha256, hold);
    return {};
}

}  // namespace

OutcomeStatus put_one_file(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                           const FileProgressHooks &hooks, FileReport &report) {
    return put_once(session, o, source, remote, hooks, report);
}

}  // namespace rftp::client
