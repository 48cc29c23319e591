#include "client/commands/put_one_file.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <optional>
#include <vector>

#include "client/commands/transfer_steps.h"
#include "client/data_connection.h"
#include "client/interrupt.h"
#include "client/rdma_transport.h"
#include "middleware/integrity/file_digest.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/stream_transfer.h"
#include "protocol/mlsx_facts.h"
#include "protocol/source_identity.h"

namespace rftp::client {
namespace {

// Uploads this large announce their size first (ALLO): a round trip is
// nothing next to them, and small files (thousands a second) skip it.
constexpr uint64_t kAnnounceSizeFrom = 8ull << 20;

// Whether rftpd records this upload's source (SRCE) on its partial file.
// Only uploads that also announce their size: a round trip is nothing next
// to them, and a smaller partial is sent again whole rather than trusted.
bool records_source(const Session &session, const UploadSource &source) {
    return session.features.source_identity && source.identity && source.size >= kAnnounceSizeFrom;
}

// The source rftpd recorded on a partial upload (MLST's X.rftp-source fact:
// a token, or ftp::kNoSource); nullopt when rftpd cannot tell.
Outcome<std::optional<std::string>> recorded_upload_source(Session &session, const std::string &partial) {
    auto reply = session.control.command("MLST " + partial);
    if (!reply) return std::unexpected(reply.error());
    // Gone or unreadable since its SIZE (another upload committed meanwhile,
    // say): nothing vouches for what REST would now continue.
    if (reply->code != 250) return std::optional<std::string>{std::string(ftp::kNoSource)};
    // "250-Listing x", " facts name", "250 End": the entry is the line that starts with a space.
    for (const std::string &line : reply->lines) {
        if (line.empty() || line.front() != ' ') continue;
        auto entry = ftp::parse_mlsx_line(std::string_view(line).substr(1));
        if (entry) return entry->fact(ftp::kSourceFact);
    }
    return std::optional<std::string>{};
}

// Whether rftpd's partial upload holds the beginning of this local file, as
// far as its record says (SRCE, docs/protocol.md "Uploads"); a note says why not.
Outcome<bool> partial_is_of(FileReport &report, Session &session, const std::string &remote,
                            const std::string &partial_name, const UploadSource &source) {
    // An older rftpd, or a device as the source: sizes are all there is.
    if (!session.features.source_identity || !source.identity) return true;
    if (!records_source(session, source)) {
        report.note(remote + ": a partial upload of a file under 8 MiB records no source; uploading it whole");
        return false;
    }
    auto recorded = recorded_upload_source(session, partial_name);
    if (!recorded) return std::unexpected(recorded.error());
    if (!*recorded) {
        report.note(remote + ": rftpd cannot tell which file its partial upload came from (no extended attributes "
                             "there?); resuming by its size");
        return true;
    }
    if (**recorded == *source.identity) return true;
    report.note(remote + (**recorded == ftp::kNoSource
                              ? ": the server's partial upload records no source (another client's, or an older rftp's)"
                              : ": the server's partial upload was begun from another version of the local file (" +
                                    **recorded + ", now " + *source.identity + ")") +
                "; uploading it whole");
    return false;
}

// rftpd renames only whole uploads into place, so a shorter remote file is
// an earlier upload, complete: this file's beginning only if the file grew
// by appending since. Its SHA-256 against the local prefix's says which.
Outcome<bool> remote_file_is_prefix(FileReport &report, Session &session, const std::string &remote,
                                    const UploadSource &source, uint64_t remote_size) {
    if (!session.features.hash_sha256 || source.device) return true;
    auto theirs = remote_sha256(session, remote);
    if (!theirs) {
        // Only a refusal leaves the session in step for the upload (a timeout
        // leaves the reply to come; Ctrl-C stops here).
        const ExitCode code = theirs.error().exit;
        if (code == ExitCode::connection || code == ExitCode::interrupted) return std::unexpected(theirs.error());
        report.note(remote + ": could not compare the remote file with the local one's beginning (" +
                    theirs.error().message + "); uploading it whole");
        return false;
    }
    middleware::TransferProgress hashing;
    Result<std::string> ours = [&] {
        InterruptGuard guard(hashing, {});
        if (interrupted()) hashing.abort.store(true);  // before the guard was there to see it
        return middleware::sha256_of_file(source.fd.get(), remote_size, &hashing);
    }();
    if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
    if (!ours) return fail_as(exit_for_data_error(ours.error()), "put " + source.path + ": " + ours.error().message);
    if (*ours == *theirs) return true;
    report.note(remote + ": the remote file is not the beginning of the local one; uploading it whole");
    return false;
}

// Where to continue an earlier upload; nullopt when the server already has it all.
Outcome<std::optional<uint64_t>> resume_offset(FileReport &report, Session &session, const std::string &remote,
                                               const UploadSource &source) {
    const uint64_t local_size = source.size;
    if (session.features.is_rftpd()) {
        const std::string partial_name = remote_partial_name(remote);
        auto partial = probe_size(session, partial_name);
        if (!partial) return std::unexpected(partial.error());
        if (partial->size && *partial->size <= local_size) {
            if (*partial->size == 0) return std::optional<uint64_t>{0};
            // Bytes of another version of the file are no prefix of this one.
            auto same = partial_is_of(report, session, remote, partial_name, source);
            if (!same) return std::unexpected(same.error());
            return std::optional<uint64_t>{*same ? *partial->size : 0};
        }
        // rftpd continues its partial file, not the final one, on REST: one
        // longer than the local file is of another file, so start afresh
        // (an offset taken from the final file would land on its bytes).
        if (partial->size) {
            report.note(remote + ": the server's partial upload is larger than the local file; uploading it whole");
            return std::optional<uint64_t>{0};
        }
    }
    auto probe = probe_size(session, remote);
    if (!probe) return std::unexpected(probe.error());
    const std::optional<uint64_t> &existing = probe->size;
    if (existing && *existing == local_size) return std::optional<uint64_t>{};
    if (existing && *existing < local_size) {
        if (*existing == 0 || !session.features.is_rftpd()) return std::optional<uint64_t>{*existing};
        auto prefix = remote_file_is_prefix(report, session, remote, source, *existing);
        if (!prefix) return std::unexpected(prefix.error());
        return std::optional<uint64_t>{*prefix ? *existing : 0};
    }
    if (existing) report.note(remote + ": remote file is larger than the local one; uploading it whole");
    return std::optional<uint64_t>{0};
}

}  // namespace

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

OutcomeStatus put_once(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                       const FileProgressHooks &hooks, FileReport &report) {
    if (o.verify && source.device) return refuse_verify_of_device("source");
    const uint64_t size = source.size;
    uint64_t offset = 0;
    if (o.resume) {
        auto found = resume_offset(report, session, remote, source);
        if (!found) return std::unexpected(found.error());
        if (!*found) {
            report.skipped = true;
            report.note(remote + " already has all " + std::to_string(size) + " bytes");
            if (o.verify) return verify_digest(session, remote, source.path);
            return {};
        }
        offset = **found;
        if (offset > 0) report.note(remote + ": resuming at byte " + std::to_string(offset));
    }
    if (records_source(session, source)) {
        // For the transfer command that follows (RSTR or STOR), like REST
        // and ALLO. A refusal only means a later resume cannot compare.
        auto named = session.control.command("SRCE " + *source.identity);
        if (!named) return std::unexpected(named.error());
    }

    auto rdma_channel = rdma_channel_for(session, o, report);
    if (!rdma_channel) return std::unexpected(rdma_channel.error());
    if (*rdma_channel) {
        auto sent = put_over_rdma(session, **rdma_channel, source.fd.get(), offset, size, remote, hooks, report,
                                  o.verify);
        if (!sent) return sent;
        if (o.verify) return verify_digest(session, remote, source.path, report.sha256);
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
    auto started = session.control.command(verb + " " + remote);
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
            middleware::ParallelSendPlan plan{source.fd.get(), offset, size, static_cast<uint32_t>(block)};
            plan.block_checksums = session.block_checksums;
            plan.kept = session.stream_kept.get();
            moved = middleware::send_parallel(fds, plan, progress);
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
        return fail_as(ours, "put " + remote + ": " + moved.error().message);
    }
    auto done = session.control.read_reply();
    if (!done) return std::unexpected(done.error());
    if (!done->positive_completion()) return refused("put " + remote, *done);

    // A framed upload's 226 already means rftpd received exactly [offset, size)
    // (docs/protocol.md); a plain stream's end proves nothing, so ask.
    if (session.features.size && !framed) {
        auto stored = probe_size(session, remote);
        if (!stored) return std::unexpected(stored.error());
        if (stored->size && *stored->size != size)
            return fail_as(ExitCode::verification, "put " + remote + ": server holds " + std::to_string(*stored->size) +
                                                       " bytes, local file has " + std::to_string(size));
    }
    if (o.verify) return verify_digest(session, remote, source.path);
    return {};
}

}  // namespace

OutcomeStatus put_one_file(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                           const FileProgressHooks &hooks, FileReport &report) {
    return put_once(session, o, source, remote, hooks, report);
}

}  // namespace rftp::client
