#include "client/commands/get_one_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "client/commands/partial_identity.h"
#include "client/commands/transfer_steps.h"
#include "client/data_connection.h"
#include "client/interrupt.h"
#include "client/transfer/rdma_transport.h"
#include "common/path_text.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/disk/plain_file.h"
#include "middleware/disk/partial_file.h"
#include "middleware/disk/source_attribute.h"
#include "middleware/range_set.h"
#include "middleware/resume_journal.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/stream_transfer.h"

namespace rftp::client {

Outcome<Destination> choose_destination(const std::string &local, const std::string &remote_path) {
    Destination d;
    if (local == "-") {
        d.direct = true;
        return d;
    }
    std::string path = local;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        std::string base = basename_of(remote_path);
        if (base.empty()) return fail_as(ExitCode::usage, "URL names a directory; give a file name to download");
        path += (path.ends_with('/') ? "" : "/") + base;
    }
    return destination_at(path);
}

Outcome<Destination> destination_at(const std::string &path) {
    Destination d;
    d.final_path = path;
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return fail_as(ExitCode::local_file, path + " is a directory");
        d.direct = true;  // device or FIFO: the reader wants the bytes, not a rename
        d.write_path = path;
        return d;
    }
    d.write_path = ftp::client_partial_name(path);
    return d;
}

namespace {

// A failed sync, at one of the journal's checkpoints or at the end: none of
// the partial can be trusted (middleware/disk/partial_file.h), so it goes
// with its journal.
OutcomeStatus discard_unsynced(middleware::PartialFile &partial, const Destination &dest, const std::string &why) {
    partial.discard();
    return fail_as(ExitCode::local_file,
                   "fsync " + dest.write_path + ": " + why + "; the partial file was discarded: fetch the file again");
}

// -c and LOCAL already holds exactly the server's size: nothing to fetch.
bool already_complete(const Options &o, const Destination &dest, const std::optional<uint64_t> &size) {
    if (!o.resume || dest.direct || !size) return false;
    struct stat st {};
    return ::stat(dest.final_path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           static_cast<uint64_t>(st.st_size) == *size;
}

OutcomeStatus get_once(Session &session, const Options &o, const std::string &remote, const Destination &dest,
                       const FileProgressHooks &hooks, FileReport &report, const ListedFacts &listed) {
    if (o.verify && dest.direct) return refuse_verify_of_device("download");
    if (auto ok = refuse_name_ftp_cannot_carry("get", remote); !ok) return ok;
    auto probe = probe_size(session, remote);
    if (!probe) return std::unexpected(probe.error());
    // SIZE offered but refused: the file is missing or not a plain file.
    if (!probe->size && session.features.size) return refused("get " + remote, probe->reply);
    const std::optional<uint64_t> size = probe->size ? probe->size : listed.size;

    if (already_complete(o, dest, size)) {
        report.skipped = true;
        report.note(dest.final_path + " already has all " + std::to_string(*size) + " bytes");
        if (!o.verify) return {};
        auto same = verify_digest(session, remote, dest.final_path);
        if (!same && same.error().exit == ExitCode::verification)
            return skipped_file_differs(same.error(), dest.final_path, "get it again");
        return same;
    }

    UniqueFd file;
    uint64_t offset = 0;
    // Stdout may be a file the shell shares with what comes before and after.
    const auto placement = dest.write_path.empty() ? middleware::disk::Placement::at_own_position
                                                   : middleware::disk::Placement::at_offsets;
    if (dest.write_path.empty()) {
        file.reset(::dup(STDOUT_FILENO));
    } else {
        // The partial file is ours: a symlink planted at its name (a shared
        // directory) must not send the download through to another file,
        // and a FIFO there must not hang the open.
        file = dest.direct ? UniqueFd(::open(dest.write_path.c_str(), O_WRONLY | O_CLOEXEC))
                           : middleware::open_plain_file(dest.write_path, O_WRONLY | O_CREAT | O_CLOEXEC);
        if (!file && !dest.direct) {
            const char *what = errno == ELOOP ? " is a symlink" : errno == EISDIR ? " is a directory"
                             : errno == ENXIO ? " is a FIFO" : errno == EINVAL ? " is not a plain file" : nullptr;
            if (what)
                return fail_as(ExitCode::local_file, dest.write_path + what +
                                                         "; rftp keeps its partial download there, as a plain file "
                                                         "of its own: remove it");
        }
        if (!file) return fail_as(ExitCode::local_file, "open " + dest.write_path + ": " + std::strerror(errno));
    }
    const std::string journal_path = ftp::client_journal_name(dest.final_path);
    // A device or stdout has no partial file and no journal to remove.
    middleware::PartialFile partial(file.get(), [&](bool partial_too) {
        if (dest.direct) return;
        if (partial_too) ::unlink(dest.write_path.c_str());
        ::unlink(journal_path.c_str());
    });
    if (!dest.direct) {
        auto modify = remote_modify_time(session, remote, listed.modify);
        if (!modify) return std::unexpected(modify.error());
        const auto identity = partial_identity(size, *modify);
        struct stat st {};
        ::fstat(file.get(), &st);
        offset = o.resume ? static_cast<uint64_t>(st.st_size) : 0;
        // A parallel download that died leaves blocks beyond holes: only the
        // prefix its journal vouches for is good.
        if (auto journaled = middleware::read_resume_journal(journal_path); journaled && *journaled < offset)
            offset = *journaled;
        if (size && offset > *size) {
            report.note(dest.write_path + " is larger than the remote file; starting over");
            offset = 0;
        }
        // Bytes of another version of the file are no prefix of this one.
        // (A partial that records nothing, from an older rftp or a file
        // system without user extended attributes, is trusted by its size;
        // on such a file system the user is told what that risks.)
        auto recorded = middleware::recorded_source(file.get());
        if (offset > 0 && !recorded && identity && !o.verify)
            report.note(dest.write_path + ": its file system keeps no record of the remote file's version it was "
                        "begun from (" + recorded.error().message + "), so a remote file changed since cannot be "
                        "told; resuming by its size: add --verify to check the result");
        if (offset > 0 && recorded && *recorded && identity && **recorded != *identity) {
            report.note(dest.write_path + " holds the start of an earlier version of the remote file (" + **recorded +
                        ", now " + *identity + "); starting over");
            offset = 0;
        }
        if (::ftruncate(file.get(), static_cast<off_t>(offset)) < 0)
            return fail_as(ExitCode::local_file, "truncate " + dest.write_path + ": " + std::strerror(errno));
        if (identity) (void)middleware::record_source(file.get(), *identity);  // best effort, as above
        if (offset > 0) report.note(dest.write_path + ": resuming at byte " + std::to_string(offset));
        // The old journal stays until this attempt's replaces it: the bytes
        // it vouches for may not be on the disk yet.
    }

    bool complete_already = size && offset == *size && offset > 0;
    // RDMA writes blocks at their offsets: the destination must be seekable
    // (a file, /dev/null), unless blocks are written in file order.
    bool positioned = ::lseek(file.get(), 0, SEEK_CUR) >= 0 || o.sequential_writes;
    if (!complete_already && positioned) {
        auto channel = rdma_channel_for(session, o, report);
        if (!channel) return std::unexpected(channel.error());
        if (*channel) {
            middleware::RangeSet received(offset);
            // However this attempt ends, the file is cut to its complete
            // prefix (all of it when everything arrived), the only part a
            // resume may trust.
            std::optional<middleware::ReservationGuard> cut_to_prefix;
            if (!dest.direct) {
                auto j = middleware::ResumeJournal::create(journal_path, offset, {.data_fd = file.get()});
                if (!j) return fail_as(ExitCode::local_file, j.error().message);
                partial.keep_journal(std::move(*j));
                cut_to_prefix.emplace(file.get(), received);
            }
            auto got = get_over_rdma(session, **channel, file.get(), offset, size, remote, hooks, report, received,
                                     partial.journal(), o.sequential_writes || dest.direct, o.verify, placement);
            if (!got) {
                // A checkpoint's failed sync stops the transfer: say that, not
                // the stop. Ctrl-C first, as on TCP below: the partial stays,
                // with a journal that vouches for nothing of it.
                if (Status synced = partial.stop_checkpoints(); !synced && !interrupted())
                    return discard_unsynced(partial, dest, synced.error().message);
                return got;
            }
            complete_already = true;  // the TCP path below has nothing left to do
        }
    }
    if (!complete_already) {
        report.transport = "tcp";
        unsigned streams = 1;
        uint64_t block = o.block_size;
        bool big_enough = size && *size - offset > o.block_size;
        // /dev/null takes blocks in any order (memory-to-memory mode).
        const bool discard = middleware::memory_endpoint(file.get()) == middleware::MemoryEndpoint::discard;
        // From rftpd, a download into a file (or /dev/null) is framed even on
        // one stream, as every upload to it is: each block's CRC32C is checked
        // before the disk engine writes it. Stdout, a pipe or another device
        // wants the bytes in order, and takes the plain stream.
        const bool framed = session.features.parallel && size && (!dest.direct || discard);
        if (o.parallel > 1) {
            if (!session.features.parallel) report.note("server does not offer PARALLEL; using one stream");
            else if (dest.direct && !discard) report.note("parallel streams need a regular file; using one stream");
            else if (!big_enough) report.note("file fits in one block; using one stream");
        }
        if (framed) {
            auto grant = negotiate_parallel(session, big_enough ? o.parallel : 1, o.block_size);
            if (!grant) return std::unexpected(grant.error());
            streams = grant->streams;
            block = grant->block_size;
        } else if (session.parallel_in_force) {
            // The session may be reused for the next file: a plain stream
            // after a framed one must switch framing off again.
            if (auto off = disable_parallel(session); !off) return off;
        }
        // Framed blocks land out of order, and even one stream's disk writes
        // finish in any order: a journal keeps the complete prefix for a
        // resume, even if this process or the machine dies. It goes only
        // once the whole file is synced, below.
        if (!dest.direct) {
            auto j = middleware::ResumeJournal::create(journal_path, offset, {.data_fd = file.get()});
            if (!j) return fail_as(ExitCode::local_file, j.error().message);
            partial.keep_journal(std::move(*j));
        }
        middleware::RangeSet received(offset);
        // A local disk without room for the rest fails now, before a byte
        // moves (and before REST, which would linger for the next file).
        // Framed, the file takes its whole size at once (no write then
        // extends it), and the guard cuts it to its complete prefix however
        // this attempt ends: only that prefix is trustworthy for a resume.
        std::optional<middleware::ReservationGuard> unreserve_on_failure;
        if (!dest.direct && size && *size > offset) {
            auto whole = framed ? middleware::ReservedSize::whole : middleware::ReservedSize::hidden;
            if (auto reserved = partial.reserve(offset, *size, whole); !reserved)
                return fail_as(ExitCode::local_file, "get " + remote + ": " + reserved.error().message);
            if (framed) {
                unreserve_on_failure.emplace(file.get(), received);
            } else {
                unreserve_on_failure.emplace(file.get());
            }
        }
        if (offset > 0) {
            auto rest = session.control.command("REST " + std::to_string(offset));
            if (!rest) return std::unexpected(rest.error());
            if (rest->code != 350) return refused("server cannot resume (REST)", *rest);
        }
        auto socks = open_data_connections(session, streams);
        if (!socks) return std::unexpected(socks.error());
        auto started = session.control.command("RETR " + remote);
        if (!started) return std::unexpected(started.error());
        if (!started->positive_preliminary()) return refused("get " + remote, *started);

        std::vector<int> fds;
        for (auto &s : *socks) fds.push_back(s.get());
        middleware::TransferProgress progress;
        Status moved;
        uint64_t end = offset;
        {
            middleware::StopOnFailedCheckpoint stop(partial.journal(), progress.abort);
            InterruptGuard guard(progress, fds);
            ProgressReporter reporter(hooks.per_file, progress, offset, size);
            BatchProgress::Watch watch(hooks.batch, progress);
            if (!framed) {
                auto r = middleware::receive_stream(fds[0], file.get(), offset, progress, true,
                                                    session.stream_kept.get(), placement, partial.prefix_recorder());
                if (r) end = *r;
                else moved = std::unexpected(r.error());
            } else {
                middleware::ParallelReceivePlan plan{.file_fd = file.get(),
                                                     .start = offset,
                                                     .max_block_size = static_cast<uint32_t>(block),
                                                     .max_size = *size,
                                                     .on_prefix_grown = partial.prefix_recorder(),
                                                     .block_checksums = session.block_checksums,
                                                     .kept = session.stream_kept.get(),
                                                     .digest = o.verify};
                auto r = middleware::receive_parallel(fds, plan, received, progress);
                if (r) report.sha256 = r->sha256;
                end = received.contiguous_end();
                if (r && r->size != *size)
                    moved = fail_msg("streams announced size " + std::to_string(r->size) + ", SIZE said " +
                                     std::to_string(*size) + " (the file changed on the server)",
                                     kFileChanged);
                else if (!r) moved = std::unexpected(r.error());
                else if (!received.covers_exactly(r->size)) moved = fail_msg("streams left holes in the file");
            }
        }
        socks->clear();
        report.streams = streams;
        report.bytes = progress.bytes.load();
        note_blocks_resent(report, progress);
        if (interrupted()) {
            abort_transfer(session);
            return fail_as(ExitCode::interrupted, "interrupted");
        }
        if (!moved) {
            // The server ended the streams: its reply says why (451, it had
            // no thread to spare), which beats our "closed before its end".
            std::optional<ftp::Reply> why;
            if (-moved.error().code == ECONNRESET) {
                if (auto r = session.control.read_reply(2); r && r->code >= 400) why = *r;
            }
            if (!why) abort_transfer(session);
            if (Status synced = partial.stop_checkpoints(); !synced)
                return discard_unsynced(partial, dest, synced.error().message);
            if (why) return refused("get " + remote, *why);
            return fail_as(exit_for_data_error(moved.error()), "get " + remote + ": " + moved.error().message);
        }
        auto done = session.control.read_reply();
        if (!done) return std::unexpected(done.error());
        if (!done->positive_completion()) return refused("get " + remote, *done);
        if (size && end != *size)
            return fail_as(ExitCode::verification, "get " + remote + ": received " + std::to_string(end) +
                                                       " bytes but the server's SIZE is " + std::to_string(*size));
    }
    if (dest.direct) return {};  // nothing to verify: refused above with --verify
    // Whole and on the disk: from here the file's size says it all. A failed
    // sync at one of the journal's checkpoints counts as this one failing.
    if (Status durable = partial.make_durable(middleware::PartialFile::Sync::data_and_attributes); !durable)
        return discard_unsynced(partial, dest, durable.error().message);
    // Its source record stays until the digests agree: a verification cut
    // short (no HASH reply, Ctrl-C) keeps a whole partial file, and only
    // that record tells a later -c whether the remote file is still the
    // version it holds.
    if (o.verify) {
        if (auto ok = verify_digest(session, remote, dest.write_path, report.sha256); !ok) return ok;
    }
    middleware::forget_source(file.get());  // the final file keeps no trace of the bookkeeping
    file.reset();
    if (::rename(dest.write_path.c_str(), dest.final_path.c_str()) < 0)
        return fail_as(ExitCode::local_file,
                       "rename " + dest.write_path + " to " + dest.final_path + ": " + std::strerror(errno));
    return {};
}

}  // namespace

OutcomeStatus get_one_file(Session &session, const Options &o, const std::string &remote, const Destination &dest,
                           const FileProgressHooks &hooks, FileReport &report, const ListedFacts &listed) {
    auto got = get_once(session, o, remote, dest, hooks, report, listed);
    // A digest or a byte count that disagrees with the server's: what this
    // attempt wrote is not a prefix of the file a resume would fetch. Never
    // resume it. (A skipped file's partial, if any, is not this attempt's.)
    if (!got && got.error().exit == ExitCode::verification && !dest.direct && !report.skipped) {
        ::unlink(dest.write_path.c_str());
        ::unlink(ftp::client_journal_name(dest.final_path).c_str());
    }
    return got;
}

}  // namespace rftp::client
