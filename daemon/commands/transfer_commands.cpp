// Commands that move data over data connections: RETR, STOR, APPE, and the
// listings LIST, NLST, MLSD. Each checks what it can on the loop, then hands
// a body to Session::run_transfer, which runs it on its own thread.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <optional>

#include "common/log.h"
#include "daemon/commands/command_support.h"
#include "daemon/commands/command_table.h"
#include "daemon/config/options.h"
#include "daemon/data/ascii_transfer.h"
#include "daemon/data/upload_flow.h"
#include "daemon/data/upload_target.h"
#include "daemon/listing/list_format.h"
#include "daemon/listing/tree_listing.h"
#include "daemon/session/session.h"
#include "middleware/range_set.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/socket_io.h"
#include "middleware/tcp/stream_transfer.h"

namespace rftp::daemon {
namespace {

using middleware::RangeSet;

// Framed streams for the next transfer (0: plain stream mode); frames need TYPE I.
bool streams_for_transfer(Session &s, unsigned &streams) {
    streams = s.state.parallel;
    if (streams > 0 && s.state.ascii) {
        s.reply(504, "Parallel streams need TYPE I.");
        return false;
    }
    return true;
}

// framed: the transfer may run on connections an earlier one kept (DATAKEEP).
std::shared_ptr<TransferJob> take_channel_or_reply(Session &s, bool framed = false) {
    if (s.tls_required() && !s.state.protect_data) {
        // Fail-closed (daemon/SECURITY.md): this listener carries no file in clear text.
        s.reply(521, "Data connections must be protected here: send PBSZ 0 and PROT P first.");
        (void)s.take_data_channel();
        return nullptr;
    }
    auto job = s.take_data_channel(framed);
    if (!job) {
        s.reply(425, job.error().message);
        return nullptr;
    }
    return *job;
}

void end_of_data(const std::vector<int> &socks) {
    for (int fd : socks) ::shutdown(fd, SHUT_WR);
}

// Whether a framed transfer's connections stay for the next one (OPTS
// DATAKEEP). Under PROT P their TLS stays up too: no close_notify ends
// the transfer; its EOD frames do.
bool keeps_connections(const Session &s, unsigned streams) { return s.state.keep_data && streams > 0; }

middleware::ConnectionEnd framed_end(bool keep) {
    return keep ? middleware::ConnectionEnd::keep_open : middleware::ConnectionEnd::await_peer_close;
}

// blocksum= only where frames carry one: plain stream mode has no blocks.
std::string transfer_fields(const char *direction, const std::string &path, unsigned streams, bool block_checksums) {
    std::string fields =
        std::string("direction=") + direction + " path=" + log::quote(path) + " streams=" + std::to_string(streams);
    if (streams > 0) fields += blocksum_field(block_checksums);
    return fields;
}

// STOR /dev/null: received as any upload (framed and checked, or a plain
// stream) and dropped, so a client sending /dev/zero measures the network
// and both ends' CPUs alone, as RSTR /dev/null does over RDMA.
void store_discarded(Session &s, uint64_t rest) {
    if (rest != 0) return s.reply(554, "REST makes no sense for /dev/null.");
    unsigned streams = 0;
    if (!streams_for_transfer(s, streams)) return;
    auto job = take_channel_or_reply(s, streams > 0);
    if (!job) return;
    const bool keep = keeps_connections(s, streams);
    uint32_t max_block = s.state.block_size;
    bool checksums = s.state.block_checksums;
    unsigned depth = s.options().disk.queue_depth;
    auto kept = s.state.stream_kept;
    s.run_transfer(job, transfer_fields("store", kDiscardPath, streams, checksums), [=]() -> TransferOutcome {
        UniqueFd null(::open(kDiscardPath, O_WRONLY | O_CLOEXEC));
        if (!null) return {451, "Could not open /dev/null.", 0, "failed"};
        auto socks = job->open_connections(static_cast<int>(std::max(streams, 1u)), "Ok to send data (discarded).");
        if (!socks) return open_failed_outcome(socks.error(), job->aborted());
        Status received;
        if (streams > 0) {
            RangeSet ranges(0);
            middleware::ParallelReceivePlan plan{.file_fd = null.get(),
                                                 .max_block_size = max_block,
                                                 .direct_io = false,
                                                 .block_checksums = checksums,
                                                 .queue_depth = depth,
                                                 .end = framed_end(keep),
                                                 .kept = kept.get()};
            if (auto r = middleware::receive_parallel(*socks, plan, ranges, job->progress); !r) received = fail(r.error());
        } else if (auto r = middleware::receive_stream((*socks)[0], null.get(), 0, job->progress, false, kept.get());
                   !r) {
            received = fail(r.error());
        }
        uint64_t bytes = job->progress.bytes.load();
        if (received) received = job->check_clean_end();
        if (!received) return failed_outcome(received.error(), job->aborted(), bytes);
        if (!keep) (void)job->finish_connections();  // our close_notify: the data is in, whatever became of it
        TransferOutcome out{226, "Transfer complete (discarded).", bytes, "ok"};
        out.keep_connections = keep;
        return out;
    });
}

void store(Session &s, const std::string &arg, bool append) {
    auto [rest, allocate, source, hold] = take_pending_transfer(s);
    if (append) allocate.reset();
    if (!append && arg == kDiscardPath) return store_discarded(s, rest);
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    // A session holds one upload at most: its next one lets the lock go
    // (the held file stays whole), or it could not even send that file again.
    s.state.held_upload.reset();
    if (!s.state.root->writable()) return s.reply(550, "Permission denied.");
    unsigned streams = 0;
    if (!append && !streams_for_transfer(s, streams)) return;
    auto job = take_channel_or_reply(s, streams > 0);
    if (!job) return;
    const bool keep = keeps_connections(s, streams);

    auto root = s.state.root;
    bool ascii = s.state.ascii;
    uint32_t max_block = s.state.block_size;  // what OPTS PARALLEL agreed bounds every frame
    bool direct_io = s.options().disk.direct_io;
    unsigned depth = s.options().disk.queue_depth;
    bool checksums = s.state.block_checksums;
    bool digest = s.state.digest_transfers && !append;
    auto kept = s.state.stream_kept;
    UploadRequest req{.path = *vpath, .rest = rest, .append = append, .ranged = streams > 0, .in_order = ascii,
                      .sync = s.options().sync_before_rename, .source = source, .hold = hold && !append};
    if (s.options().preallocate) req.reserve_size = allocate;
    s.run_transfer(job, transfer_fields(append ? "append" : "store", req.path, streams, checksums),
                   [=]() -> TransferOutcome {
        std::optional<TransferDigest> taken;
        TransferOutcome out = run_upload(*root, req, *job, [&](UploadTarget &target, RangeSet &ranges,
                                                               const auto &on_prefix) -> Status {
            auto socks = job->open_connections(static_cast<int>(std::max(streams, 1u)), "Ok to send data.");
            if (!socks)
                return fail(socks.error().code == kDataTlsRefused ? socks.error()
                                                                  : Error{kDataConnectionNotOpened, socks.error().message});
            if (streams > 0) {
                middleware::ParallelReceivePlan plan{.file_fd = target.fd.get(),
                                                     .start = target.start,
                                                     .max_block_size = max_block,
                                                     .on_prefix_grown = on_prefix,
                                                     .direct_io = direct_io,
                                                     .block_checksums = checksums,
                                                     .queue_depth = depth,
                                                     .end = framed_end(keep),
                                                     .kept = kept.get(),
                                                     .digest = digest};
                // ALLO's size bounds the file: its buffers are sized to it,
                // and a frame past it fails the upload.
                if (allocate) plan.max_size = *allocate;
                auto r = middleware::receive_parallel(*socks, plan, ranges, job->progress);
                if (!r) return fail(r.error());
                if (r->sha256) taken = TransferDigest::of(target.fd.get(), *r->sha256);
                return {};
            }
            auto r = ascii ? receive_ascii((*socks)[0], target.fd.get(), target.start, job->progress)
                           : middleware::receive_stream((*socks)[0], target.fd.get(), target.start, job->progress,
                                                        direct_io, kept.get(), middleware::disk::Placement::at_offsets,
                                                        on_prefix);
            if (!r) return fail(r.error());
            // Under TLS, an end of stream is the file's end only with close_notify.
            return job->check_clean_end();
        });
        // HASH answers from it while the file stays as the rename left it.
        if (out.code == 226) out.digest = std::move(taken);
        out.keep_connections = keep;
        // Our close_notify after the file is in place: the data is in, whatever became of it.
        if (out.code < 300 && !keep) (void)job->finish_connections();
        return out;
    });
}

enum class ListingKind { list, nlst, mlsd };

// LIST takes ls-style options ("-la") that clients send out of habit; skip them.
std::string strip_list_options(const std::string &arg) {
    std::size_t pos = 0;
    while (pos < arg.size() && arg[pos] == '-') {
        std::size_t space = arg.find(' ', pos);
        if (space == std::string::npos) return "";
        pos = space + 1;
    }
    return arg.substr(pos);
}

// What every listing starts from: its directory (the session's own when
// arg is empty) and the data channel; empty once a refusal was replied.
struct ListingStart {
    std::string path;
    std::shared_ptr<TransferJob> job;
    std::shared_ptr<const UserRoot> root;
};

std::optional<ListingStart> start_listing(Session &s, const std::string &arg) {
    (void)take_pending_transfer(s);
    auto vpath = resolve_or_reply(s, arg.empty() ? "." : arg);
    if (!vpath) return std::nullopt;
    auto job = take_channel_or_reply(s);
    if (!job) return std::nullopt;
    return ListingStart{*vpath, std::move(job), s.state.root};
}

void listing(Session &s, const std::string &raw_arg, ListingKind kind) {
    auto start = start_listing(s, kind == ListingKind::mlsd ? raw_arg : strip_list_options(raw_arg));
    if (!start) return;
    const std::string path = start->path;
    auto job = start->job;
    auto root = start->root;
    s.run_transfer(job, transfer_fields("list", path, 0, true), [=]() -> TransferOutcome {
        auto st = root->stat(path);
        if (!st) return {550, "Could not list: " + st.error().message + ".", 0, "failed"};
        std::string text;
        std::time_t now = std::time(nullptr);
        if (!S_ISDIR(st->st_mode)) {
            if (kind == ListingKind::mlsd) return {501, "MLSD needs a directory; use MLST for a file.", 0, "failed"};
            std::string name = path.substr(path.rfind('/') + 1);
            text = kind == ListingKind::nlst ? name + "\r\n" : format_list_line(*st, name, now) + "\r\n";
        } else {
            auto entries = root->list(path);
            if (!entries) return {550, "Could not list: " + entries.error().message + ".", 0, "failed"};
            if (kind == ListingKind::mlsd) text = format_mlsx_line(*st, ".", root->writable(), true) + "\r\n";
            for (const auto &e : *entries) {
                if (kind == ListingKind::nlst) text += e.name;
                else if (kind == ListingKind::mlsd) text += mlsd_entry_line(*root, path, e, e.name);
                else text += format_list_line(listed_stat(*root, path, e), e.name, now);
                text += "\r\n";
            }
        }
        auto socks = job->open_connections(1, "Here comes the directory listing.");
        if (!socks) return open_failed_outcome(socks.error(), job->aborted());
        if (auto w = middleware::write_all((*socks)[0], text.data(), text.size()); !w)
            return failed_outcome(w.error(), job->aborted(), 0);
        end_of_data(*socks);
        if (auto done = job->finish_connections(); !done) return failed_outcome(done.error(), job->aborted(), 0);
        return {226, "Directory send OK.", text.size(), "ok"};
    });
}

// MLSR (docs/protocol.md, "Tree listings"): the tree's lines go out a
// directory at a time; any failure after the 150 is 451, so a client never
// takes part of a tree for all of it.
void tree_listing(Session &s, const std::string &arg) {
    auto start = start_listing(s, arg);
    if (!start) return;
    const std::string path = start->path;
    auto job = start->job;
    auto root = start->root;
    s.run_transfer(job, transfer_fields("list_tree", path, 0, true), [=]() -> TransferOutcome {
        auto st = root->stat(path);
        if (!st) return {550, "Could not list: " + st.error().message + ".", 0, "failed"};
        if (!S_ISDIR(st->st_mode)) return {501, "MLSR needs a directory; use MLST for a file.", 0, "failed"};
        // The top unreadable is 550 before the 150, as for MLSD.
        if (auto top = root->open_directory(path); !top)
            return {550, "Could not list: " + top.error().message + ".", 0, "failed"};
        auto socks = job->open_connections(1, "Here comes the tree listing.");
        if (!socks) return open_failed_outcome(socks.error(), job->aborted());
        const int fd = (*socks)[0];
        uint64_t sent = 0;
        Status listed = list_tree(
            *root, path,
            [&](std::string_view lines) -> Status {
                sent += lines.size();
                return middleware::write_all(fd, lines.data(), lines.size());
            },
            [&] { return job->aborted(); });
        if (!listed) {
            if (job->aborted()) return failed_outcome(listed.error(), true, sent);
            return {451, "Tree listing ended: " + listed.error().message + "; list the directories one by one.",
                    sent, "failed"};
        }
        end_of_data(*socks);
        if (auto done = job->finish_connections(); !done) return failed_outcome(done.error(), job->aborted(), sent);
        return {226, "Tree listing sent.", sent, "ok"};
    });
}

}  // namespace

void cmd_retr(Session &s, const std::string &arg) {
    uint64_t rest = take_pending_transfer(s).rest;
    auto vpath = resolve_or_reply(s, arg);
    if (!vpath) return;
    unsigned streams = 0;
    if (!streams_for_transfer(s, streams)) return;
    auto source = open_for_retrieve(s, *vpath, rest);
    if (!source) return;
    uint64_t size = source->size;
    bool direct_io = s.options().disk.direct_io;
    unsigned depth = s.options().disk.queue_depth;
    bool checksums = s.state.block_checksums;
    bool digest = s.state.digest_transfers;
    auto kept = s.state.stream_kept;
    auto job = take_channel_or_reply(s, streams > 0);
    if (!job) return;
    const bool keep = keeps_connections(s, streams);
    const bool unechoed = keep && s.state.keep_unechoed;

    auto file = std::make_shared<UniqueFd>(std::move(source->fd));
    bool ascii = s.state.ascii;
    uint32_t block = s.state.block_size;
    std::string preliminary = std::string("Opening ") + (ascii ? "ASCII" : "BINARY") + " mode data connection for " +
                              *vpath + " (" + std::to_string(size) + " bytes).";
    s.run_transfer(job, transfer_fields("retrieve", *vpath, streams, checksums), [=]() -> TransferOutcome {
        auto socks = job->open_connections(static_cast<int>(std::max(streams, 1u)), preliminary);
        if (!socks) return open_failed_outcome(socks.error(), job->aborted());
        Status sent;
        std::optional<TransferDigest> taken;
        if (streams > 0) {
            // Remembered only for the file as it was throughout (of_unchanged).
            auto before = TransferDigest::of(file->get(), "");
            auto r = middleware::send_parallel(
                *socks,
                {file->get(), rest, size, block, direct_io, checksums, depth, framed_end(keep), kept.get(), digest,
                 /*from_page_cache=*/true, /*unechoed_if_one_block=*/unechoed},
                job->progress);
            if (!r) sent = fail(r.error());
            else if (r->sha256) taken = TransferDigest::of_unchanged(file->get(), before, *r->sha256, size);
        } else if (ascii) {
            auto r = send_ascii((*socks)[0], file->get(), rest, job->progress);
            if (!r) sent = fail(r.error());
        } else {
            sent = middleware::send_stream((*socks)[0], file->get(), rest, size, job->progress);
        }
        uint64_t bytes = job->progress.bytes.load();
        if (!sent) return failed_outcome(sent.error(), job->aborted(), bytes);
        if (!keep) end_of_data(*socks);
        // Under TLS the reply waits until the relay sent it all, and close_notify.
        // Kept connections end the file with its EOD frames instead.
        if (!keep)
            if (auto done = job->finish_connections(); !done) return failed_outcome(done.error(), job->aborted(), bytes);
        TransferOutcome out{226, "Transfer complete.", bytes, "ok"};
        out.digest = std::move(taken);
        out.keep_connections = keep;
        return out;
    });
}

void cmd_stor(Session &s, const std::string &arg) { store(s, arg, false); }
void cmd_appe(Session &s, const std::string &arg) { store(s, arg, true); }
void cmd_list(Session &s, const std::string &arg) { listing(s, arg, ListingKind::list); }
void cmd_nlst(Session &s, const std::string &arg) { listing(s, arg, ListingKind::nlst); }
void cmd_mlsd(Session &s, const std::string &arg) { listing(s, arg, ListingKind::mlsd); }
void cmd_mlsr(Session &s, const std::string &arg) { tree_listing(s, arg); }

}  // namespace rftp::daemon
