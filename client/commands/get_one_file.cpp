#include "client/commands/get_one_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "client/commands/partial_identity.h"
#include "client/commands/transfer_steps.h"
#include "client/interrupt.h"
#include "client/transfer/path_streams.h"
#include "client/transfer/rdma_transport.h"
#include "client/transfer/tcp_transport.h"
#include "client/transfer/transfer_flow.h"
#include "common/path_text.h"
#include "middleware/disk/memory_endpoint.h"
#include "middleware/disk/plain_file.h"
#include "middleware/disk/partial_file.h"
#include "middleware/disk/source_attribute.h"
#include "middleware/range_set.h"
#include "middleware/resume_journal.h"

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

// One download under way: what every step below reads, and the partial file
// they take through its life.
struct Download {
    Session &session;
    const Options &o;
    const std::string &remote;
    const Destination &dest;
    const FileProgressHooks &hooks;
    FileReport &report;
    int fd = -1;
    std::optional<uint64_t> size;
    uint64_t offset = 0;
    std::string journal_path;
    middleware::PartialFile &partial;
    // Stdout may be a file the shell shares with what comes before and after.
    middleware::disk::Placement placement = middleware::disk::Placement::at_offsets;

    std::string what() const { return "get " + remote; }
};

// A failed sync, at one of the journal's checkpoints or at the end: none of
// the partial can be trusted (middleware/disk/partial_file.h), so it goes
// with its journal.
OutcomeStatus discard_unsynced(Download &d, const std::string &why) {
    d.partial.discard();
    return fail_as(ExitCode::local_file,
                   "fsync " + d.dest.write_path + ": " + why + "; the partial file was discarded: fetch the file again");
}

// After a transfer that failed: a checkpoint's failed sync is what stopped
// it, and says so. Ctrl-C first: the partial stays, with a journal that
// vouches for nothing of it.
OutcomeStatus failed_download(Download &d, OutcomeStatus failure) {
    if (Status synced = d.partial.stop_checkpoints(); !synced && !interrupted())
        return discard_unsynced(d, synced.error().message);
    return failure;
}

// -c and LOCAL already holds exactly the server's size: nothing to fetch.
bool already_complete(const Options &o, const Destination &dest, const std::optional<uint64_t> &size) {
    if (!o.resume || dest.direct || !size) return false;
    struct stat st {};
    return ::stat(dest.final_path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           static_cast<uint64_t>(st.st_size) == *size;
}

OutcomeStatus report_already_complete(Session &session, const Options &o, const std::string &remote,
                                      const Destination &dest, uint64_t size, FileReport &report) {
    report.skipped = true;
    report.note(dest.final_path + " already has all " + std::to_string(size) + " bytes");
    if (!o.verify) return {};
    auto same = verify_digest(session, remote, dest.final_path);
    if (!same && same.error().exit == ExitCode::verification)
        return skipped_file_differs(same.error(), dest.final_path, "get it again");
    return same;
}

// Where the bytes go: stdout, the device, or the partial file. The partial
// file is ours: a symlink planted at its name (a shared directory) must not
// send the download through to another file, and a FIFO there must not
// hang the open.
Outcome<UniqueFd> open_destination(const Destination &dest) {
    if (dest.write_path.empty()) return UniqueFd(::dup(STDOUT_FILENO));
    UniqueFd file = dest.direct ? UniqueFd(::open(dest.write_path.c_str(), O_WRONLY | O_CLOEXEC))
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
    return file;
}

// A framed download from rftpd of one block at most keeps no resume
// journal, and -c fetches it whole: its one block is checked whole, so
// fetching it again costs less than the journal, a file made and removed
// for every small file.
bool fetched_whole(const Download &d) {
    return d.session.features.parallel && d.size && *d.size <= d.o.block_size;
}

// Ends the source record of a partial that keeps no journal. A later -c
// that would move the file in several blocks (a smaller --block-size) must
// not trust its size either: after a power loss it may hold zeros.
constexpr std::string_view kNoJournal = " unjournaled";

// How much of the partial file a -c may keep: its size, cut to what its
// journal vouches for, and nothing when it was begun from another version
// of the remote file or fits in one block.
uint64_t resumable_prefix(Download &d, uint64_t partial_size, const std::optional<std::string> &identity) {
    const std::string &path = d.dest.write_path;
    uint64_t offset = partial_size;
    // A parallel download that died leaves blocks beyond holes: only the
    // prefix its journal vouches for is good.
    if (auto journaled = middleware::read_resume_journal(d.journal_path); journaled && *journaled < offset)
        offset = *journaled;
    if (d.size && offset > *d.size) {
        d.report.note(path + " is larger than the remote file; starting over");
        return 0;
    }
    if (offset > 0 && fetched_whole(d)) {
        d.report.note(path + ": the file fits in one block, so it is fetched whole");
        return 0;
    }
    // Bytes of another version of the file are no prefix of this one. (A
    // partial that records nothing, from an older rftp or a file system
    // without user extended attributes, is trusted by its size; on such a
    // file system the user is told what that risks.)
    auto recorded = middleware::recorded_source(d.fd);
    if (offset > 0 && recorded && *recorded && (*recorded)->ends_with(kNoJournal)) {
        d.report.note(path + " was begun as a file of one block, with no resume journal; starting over");
        return 0;
    }
    if (offset > 0 && !recorded && identity && !d.o.verify)
        d.report.note(path + ": its file system keeps no record of the remote file's version it was begun from (" +
                      recorded.error().message + "), so a remote file changed since cannot be told; resuming by "
                      "its size: add --verify to check the result");
    if (offset > 0 && recorded && *recorded && identity && **recorded != *identity) {
        d.report.note(path + " holds the start of an earlier version of the remote file (" + **recorded + ", now " +
                      *identity + "); starting over");
        return 0;
    }
    return offset;
}

// How much of the partial file this attempt keeps, which is then all it
// holds: with -c its resumable prefix, else nothing.
Outcome<uint64_t> resume_point(Download &d, const ListedFacts &listed) {
    auto modify = remote_modify_time(d.session, d.remote, listed.modify);
    if (!modify) return std::unexpected(modify.error());
    const auto identity = partial_identity(d.size, *modify);
    const std::string &path = d.dest.write_path;
    struct stat st {};
    ::fstat(d.fd, &st);
    const auto partial_size = static_cast<uint64_t>(st.st_size);
    const uint64_t offset = d.o.resume && partial_size > 0 ? resumable_prefix(d, partial_size, identity) : 0;
    if (offset != partial_size && ::ftruncate(d.fd, static_cast<off_t>(offset)) < 0)
        return fail_as(ExitCode::local_file, "truncate " + path + ": " + std::strerror(errno));
    if (identity)  // best effort, as above
        (void)middleware::record_source(d.fd, fetched_whole(d) ? *identity + std::string(kNoJournal) : *identity);
    if (offset > 0) d.report.note(path + ": resuming at byte " + std::to_string(offset));
    // The old journal stays until this attempt's replaces it: the bytes it
    // vouches for may not be on the disk yet.
    return offset;
}

// Keeps the resume point while blocks land: framed or RDMA blocks land out
// of order, and even one stream's disk writes finish in any order. It goes
// only once the whole file is synced (commit_download).
OutcomeStatus keep_journal(Download &d) {
    if (d.dest.direct) return {};
    auto j = middleware::ResumeJournal::create(d.journal_path, d.offset, {.data_fd = d.fd});
    if (!j) return fail_as(ExitCode::local_file, j.error().message);
    d.partial.keep_journal(std::move(*j));
    return {};
}

OutcomeStatus get_over_rdma(Download &d, middleware::rdma::Channel &channel) {
    if (auto kept = keep_journal(d); !kept) return kept;
    middleware::RangeSet received(d.offset);
    // However this attempt ends, the file is cut to its complete prefix
    // (all of it when everything arrived), the only part a resume may trust.
    std::optional<middleware::ReservationGuard> cut_to_prefix;
    if (!d.dest.direct) cut_to_prefix.emplace(d.fd, received);
    // Preallocated: a full local disk ends the download before any block is written.
    RdmaTransport transport = rdma_download(channel,
                                            {.fd = d.fd,
                                             .start = d.offset,
                                             .expect_size = d.size,
                                             .on_prefix_grown = d.partial.prefix_recorder(),
                                             .sequential = d.o.sequential_writes || d.dest.direct,
                                             .preallocate = true,
                                             .digest = d.o.verify,
                                             .block_checksums = d.session.block_checksums,
                                             .placement = d.placement},
                                            received, d.partial.journal());
    auto got = run_transfer(d.session, transport,
                            {.verb = "RRTR", .remote = d.remote, .what = d.what(), .offset = d.offset, .size = d.size,
                             .start_timeout = d.session.control.timeout()},
                            d.hooks, d.report);
    return got ? got : failed_download(d, got);
}

// How a TCP download goes: framed from rftpd into anything that takes
// positioned writes, so each block's CRC32C is checked before the disk
// engine writes it; plain into stdout, a pipe or another device, which
// want the bytes in order. discard: the destination is /dev/null. Returns
// the streams.
Outcome<ParallelGrant> choose_tcp_streams(Download &d, bool framed, bool discard) {
    const bool big_enough = d.size && *d.size - d.offset > d.o.block_size;
    if (d.o.parallel > 1) {
        if (!d.session.features.parallel) d.report.note("server does not offer PARALLEL; using one stream");
        else if (d.dest.direct && !discard) d.report.note("parallel streams need a regular file; using one stream");
        else if (!big_enough) d.report.note("file fits in one block; using one stream");
    }
    const unsigned streams = d.size ? tcp_streams_for(d.session, d.o, *d.size - d.offset) : 1;
    if (big_enough)
        if (auto advice = long_path_advice(d.session, d.o, framed ? streams : 1)) d.report.note(*advice);
    if (framed) return negotiate_parallel(d.session, big_enough ? streams : 1, d.o.block_size);
    // The session may be reused for the next file: a plain stream after a
    // framed one must switch framing off again.
    if (d.session.parallel_in_force)
        if (auto off = disable_parallel(d.session); !off) return std::unexpected(off.error());
    return ParallelGrant{.streams = 1, .block_size = d.o.block_size};
}

OutcomeStatus get_over_tcp(Download &d) {
    d.report.transport = "tcp";
    // /dev/null takes blocks in any order (memory-to-memory mode).
    const bool discard = middleware::memory_endpoint(d.fd) == middleware::MemoryEndpoint::discard;
    const bool framed = d.session.features.parallel && d.size && (!d.dest.direct || discard);
    auto grant = choose_tcp_streams(d, framed, discard);
    if (!grant) return std::unexpected(grant.error());
    // (A server may grant smaller blocks than asked: then it moves as several.)
    const bool journaled = !framed || !fetched_whole(d) || *d.size > grant->block_size;
    if (journaled)
        if (auto kept = keep_journal(d); !kept) return kept;
    middleware::RangeSet received(d.offset);
    // A local disk without room for the rest fails now, before a byte moves
    // (and before REST, which would linger for the next file). Framed, the
    // file takes its whole size at once (no write then extends it), and the
    // guard cuts it to its complete prefix however this attempt ends: only
    // that prefix is trustworthy for a resume.
    std::optional<middleware::ReservationGuard> unreserve_on_failure;
    if (!d.dest.direct && d.size && *d.size > d.offset) {
        // Without a journal, only what was written may show in its size.
        auto whole = framed && journaled ? middleware::ReservedSize::whole : middleware::ReservedSize::hidden;
        if (auto reserved = d.partial.reserve(d.offset, *d.size, whole); !reserved)
            return fail_as(ExitCode::local_file, d.what() + ": " + reserved.error().message);
        if (framed) unreserve_on_failure.emplace(d.fd, received);
        else unreserve_on_failure.emplace(d.fd);
    }
    uint64_t end = d.offset;
    auto moves = framed ? framed_receive({.file_fd = d.fd,
                                          .start = d.offset,
                                          .max_block_size = static_cast<uint32_t>(grant->block_size),
                                          .max_size = *d.size,
                                          .on_prefix_grown = d.partial.prefix_recorder(),
                                          .block_checksums = d.session.block_checksums,
                                          .end = framed_connection_end(d.session),
                                          .kept = d.session.stream_kept.get(),
                                          .digest = d.o.verify,
                                          .unechoed_ok = d.session.data_keep_unechoed},
                                         received, d.report.sha256, end)
                        : plain_receive({.fd = d.fd,
                                         .offset = d.offset,
                                         .kept = d.session.stream_kept.get(),
                                         .placement = d.placement,
                                         .on_prefix_grown = d.partial.prefix_recorder()},
                                        end);
    middleware::ResumeJournal *journal = d.partial.journal();
    TcpTransport transport(TcpTransport::Side::download, grant->streams, framed,
                           [&moves, journal](std::span<const int> fds, middleware::TransferProgress &progress) {
                               middleware::StopOnFailedCheckpoint stop(journal, progress.abort);
                               return moves(fds, progress);
                           });
    auto got = run_transfer(d.session, transport,
                            {.verb = "RETR", .remote = d.remote, .what = d.what(), .offset = d.offset, .size = d.size,
                             .start_timeout = d.session.control.timeout()},
                            d.hooks, d.report);
    if (!got) return failed_download(d, got);
    if (d.size && end != *d.size)
        return fail_as(ExitCode::verification, d.what() + ": received " + std::to_string(end) +
                                                   " bytes but the server's SIZE is " + std::to_string(*d.size));
    return {};
}

// Whole: synced, verified when asked, and only then under its final name.
OutcomeStatus commit_download(Download &d, UniqueFd file) {
    // Whole and on the disk: from here the file's size says it all. A failed
    // sync at one of the journal's checkpoints counts as this one failing.
    if (Status durable = d.partial.make_durable(middleware::PartialFile::Sync::data_and_attributes); !durable)
        return discard_unsynced(d, durable.error().message);
    // Its source record stays until the digests agree: a verification cut
    // short (no HASH reply, Ctrl-C) keeps a whole partial file, and only
    // that record tells a later -c whether the remote file is still the
    // version it holds.
    if (d.o.verify)
        if (auto ok = verify_digest(d.session, d.remote, d.dest.write_path, d.report.sha256); !ok) return ok;
    middleware::forget_source(d.fd);  // the final file keeps no trace of the bookkeeping
    file.reset();
    if (::rename(d.dest.write_path.c_str(), d.dest.final_path.c_str()) < 0)
        return fail_as(ExitCode::local_file,
                       "rename " + d.dest.write_path + " to " + d.dest.final_path + ": " + std::strerror(errno));
    return {};
}

// Moves the bytes: over the session's RDMA channel when there is one and
// the destination takes blocks at their offsets (a file, /dev/null) or in
// file order, else over TCP. Nothing when -c found every byte there.
OutcomeStatus move_download(Download &d) {
    if (d.size && d.offset == *d.size && d.offset > 0) return {};
    const bool positioned = ::lseek(d.fd, 0, SEEK_CUR) >= 0 || d.o.sequential_writes;
    if (positioned) {
        auto channel = rdma_channel_for(d.session, d.o, d.report);
        if (!channel) return std::unexpected(channel.error());
        if (*channel) return get_over_rdma(d, **channel);
    }
    return get_over_tcp(d);
}

// To rftpd, the MDTM that resume_point asks after the SIZE goes in the
// same write: one round trip for both. Not where lines sent ahead for this
// file (a many-file run's SIZE and RETR) wait for their replies.
OutcomeStatus send_size_and_mdtm_together(Session &session, const std::string &remote, const Destination &dest,
                                          const ListedFacts &listed) {
    if (!session.features.is_rftpd() || !session.features.mdtm || dest.direct || listed.modify ||
        session.control.has_lines_ahead())
        return {};
    return session.control.send_ahead({"SIZE " + remote, "MDTM " + remote});
}

OutcomeStatus get_once(Session &session, const Options &o, const std::string &remote, const Destination &dest,
                       const FileProgressHooks &hooks, FileReport &report, const ListedFacts &listed) {
    if (o.verify && dest.direct) return refuse_verify_of_device("download");
    if (auto ok = refuse_name_ftp_cannot_carry("get", remote); !ok) return ok;
    if (auto sent = send_size_and_mdtm_together(session, remote, dest, listed); !sent) return sent;
    auto probe = probe_size(session, remote);
    if (!probe) return std::unexpected(probe.error());
    // SIZE offered but refused: the file is missing or not a plain file.
    if (!probe->size && session.features.size) return refused("get " + remote, probe->reply);
    const std::optional<uint64_t> size = probe->size ? probe->size : listed.size;
    if (already_complete(o, dest, size)) return report_already_complete(session, o, remote, dest, *size, report);

    auto file = open_destination(dest);
    if (!file) return std::unexpected(file.error());
    const std::string journal_path = ftp::client_journal_name(dest.final_path);
    // A device or stdout has no partial file and no journal to remove.
    middleware::PartialFile partial(file->get(), [&](bool partial_too) {
        if (dest.direct) return;
        if (partial_too) ::unlink(dest.write_path.c_str());
        ::unlink(journal_path.c_str());
    });
    Download d{.session = session, .o = o, .remote = remote, .dest = dest, .hooks = hooks, .report = report,
               .fd = file->get(), .size = size, .journal_path = journal_path, .partial = partial};
    if (dest.write_path.empty()) d.placement = middleware::disk::Placement::at_own_position;
    if (!dest.direct) {
        auto offset = resume_point(d, listed);
        if (!offset) return std::unexpected(offset.error());
        d.offset = *offset;
    }
    if (auto moved = move_download(d); !moved) return moved;
    if (dest.direct) return {};  // nothing to verify: refused above with --verify
    return commit_download(d, std::move(*file));
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
