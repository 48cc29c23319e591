#include "client/commands/put_one_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <optional>

#include "client/commands/transfer_steps.h"
#include "client/commands/upload_resume.h"
#include "client/interrupt.h"
#include "client/transfer/path_streams.h"
#include "client/transfer/rdma_transport.h"
#include "client/transfer/tcp_transport.h"
#include "client/transfer/transfer_flow.h"
#include "common/log.h"
#include "protocol/discard_path.h"
#include "protocol/partial_names.h"
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

// One upload under way: what every step below reads.
struct Upload {
    Session &session;
    const Options &o;
    const UploadSource &source;
    const std::string &remote;
    const FileProgressHooks &hooks;
    FileReport &report;
    uint64_t offset = 0;
    uint64_t copied_first = 0;  // what rftpd copies before its 150 (upload_resume.h)
    // With --verify, rftpd keeps the upload aside until its digest is known
    // right: over RDMA or framed streams (a plain stream's checks after it
    // assume a file in place).
    bool hold = false;

    std::string what() const { return "put " + remote; }
};

OutcomeStatus put_over_rdma(Upload &u, middleware::rdma::Channel &channel) {
    RdmaTransport transport = rdma_upload(channel, {.fd = u.source.fd.get(),
                                                    .start = u.offset,
                                                    .size = u.source.size,
                                                    .digest = u.o.verify,
                                                    .block_checksums = u.session.block_checksums});
    return run_transfer(u.session, transport,
                        {.verb = "RSTR", .remote = u.remote, .what = u.what(), .offset = u.offset,
                         .size = u.source.size, .hold = u.hold,
                         .start_timeout = timeout_after_reading(u.session, u.copied_first)},
                        u.hooks, u.report);
}

// Against rftpd every upload is framed, even on one stream: the frames
// announce the file's size, so a client that dies mid-upload can never
// leave a truncated file under the final name (a plain stream's end looks
// the same as a crash's).
Outcome<ParallelGrant> choose_tcp_streams(Upload &u, bool framed) {
    if (u.o.parallel > 1 && !framed) u.report.note("server does not offer PARALLEL; using one stream");
    if (!framed) return ParallelGrant{.streams = 1, .block_size = u.o.block_size};
    unsigned wanted = tcp_streams_for(u.session, u.o, u.source.size - u.offset);
    if (u.source.size - u.offset <= u.o.block_size) {
        if (u.o.parallel > 1) u.report.note("file fits in one block; using one stream");
        wanted = 1;
    } else if (auto advice = long_path_advice(u.session, u.o, wanted)) {
        u.report.note(*advice);
    }
    return negotiate_parallel(u.session, wanted, u.o.block_size);
}

// A framed upload's 226 already means rftpd received exactly [offset,
// size) (docs/protocol.md); a plain stream's end proves nothing, so ask.
OutcomeStatus check_plain_upload_size(Upload &u) {
    if (!u.session.features.size) return {};
    auto stored = probe_size(u.session, u.remote);
    if (!stored) return std::unexpected(stored.error());
    if (!stored->size || *stored->size == u.source.size) return {};
    Failure mismatch{ExitCode::verification, u.what() + ": server holds " + std::to_string(*stored->size) +
                                                 " bytes, local file has " + std::to_string(u.source.size)};
    // Short: part of what was sent. Longer is not this run's alone (a server
    // that appends, or stores uploads under another name and reports the
    // old file): it stays, for the user to judge.
    if (*stored->size < u.source.size) return remove_wrong_upload(u.session, u.remote, mismatch);
    mismatch.message += "; it is left as it is: check it, and remove it (rftp rm) if it is this upload's";
    return std::unexpected(mismatch);
}

OutcomeStatus put_over_tcp(Upload &u) {
    u.report.transport = "tcp";
    const bool framed = u.session.features.parallel;
    auto grant = choose_tcp_streams(u, framed);
    if (!grant) return std::unexpected(grant.error());
    u.hold = u.hold && framed;
    const int fd = u.source.fd.get();
    TcpTransport transport(TcpTransport::Side::upload, grant->streams, framed,
                           framed ? framed_send({.file_fd = fd,
                                                 .start = u.offset,
                                                 .size = u.source.size,
                                                 .block_size = static_cast<uint32_t>(grant->block_size),
                                                 .block_checksums = u.session.block_checksums,
                                                 .end = framed_connection_end(u.session),
                                                 .kept = u.session.stream_kept.get(),
                                                 .digest = u.o.verify},
                                                u.report.sha256)
                                  : plain_send(fd, u.offset, u.source.size));
    // ALLO (RFC 959): rftpd reserves the file's space first, and sizes its
    // buffers for a framed upload to it. Other servers hear it for a large
    // file only.
    std::optional<uint64_t> allocate;
    if (framed || u.source.size - u.offset >= kAnnounceSizeFrom) allocate = u.source.size;
    auto sent = run_transfer(u.session, transport,
                             {.verb = "STOR", .remote = u.remote, .what = u.what(), .offset = u.offset,
                              .size = u.source.size, .allocate = allocate, .hold = u.hold,
                              .append_if_rest_refused = !framed,
                              .start_timeout = timeout_after_reading(u.session, u.copied_first)},
                             u.hooks, u.report);
    // A plain stream's server stored what came under the final name.
    if (!sent && sent.error().exit == ExitCode::verification && !framed)
        return remove_wrong_upload(u.session, u.remote, sent.error());
    if (!sent || framed) return sent;
    return check_plain_upload_size(u);
}

OutcomeStatus refuse_what_cannot_be_sent(Session &session, const Options &o, const UploadSource &source,
                                         const std::string &remote) {
    if (o.verify && source.device) return refuse_verify_of_device("source");
    if (auto ok = refuse_name_ftp_cannot_carry("put", remote); !ok) return ok;
    if (o.verify && remote == ftp::kDiscardPath && session.features.is_rftpd())
        return fail_as(ExitCode::usage, std::string("--verify: rftpd keeps nothing of an upload to ") +
                                            ftp::kDiscardPath + " to compare; leave out --verify");
    return {};
}

}  // namespace

OutcomeStatus put_one_file(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                           const FileProgressHooks &hooks, FileReport &report) {
    if (auto ok = refuse_what_cannot_be_sent(session, o, source, remote); !ok) return ok;
    Upload u{.session = session, .o = o, .source = source, .remote = remote, .hooks = hooks, .report = report};
    if (o.resume) {
        auto found = resume_offset(report, session, remote, source);
        if (!found) return std::unexpected(found.error());
        if (!*found) {
            report.skipped = true;
            report.note(remote + " already has all " + std::to_string(source.size) + " bytes");
            if (o.verify) return verify_upload(session, remote, source, false);
            return {};
        }
        u.offset = (*found)->offset;
        u.copied_first = (*found)->copied_first;
        if (u.offset > 0) report.note(remote + ": resuming at byte " + std::to_string(u.offset));
    }
    const struct timespec sent_from = modified_now(source);
    u.hold = o.verify && session.features.hold;
    // Lines sent ahead for another file (one that could not be sent after
    // all) are answered first: an ABOR among them closes the kept
    // connections or the RDMA channel this upload would otherwise take.
    if (session.control.has_lines_ahead() && !session.control.has_lines_ahead_for(remote))
        if (auto drained = session.control.drain_ahead(); !drained) return drained;
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
    auto sent = *rdma_channel ? put_over_rdma(u, **rdma_channel) : put_over_tcp(u);
    if (!sent) return sent;
    if (auto same = refuse_if_rewritten_while_sent(session, remote, source, sent_from, u.hold); !same) return same;
    if (o.verify) return verify_upload(session, remote, source, true, report.sha256, u.hold);
    return {};
}

}  // namespace rftp::client
