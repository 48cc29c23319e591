#include "client/commands/files_ahead.h"

#include <sys/stat.h>

#include <algorithm>

#include "client/commands/get_one_file.h"
#include "client/commands/upload_resume.h"
#include "client/transfer/path_streams.h"

namespace rftp::client {
namespace {

bool exists(const std::string &path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// The next file goes over the session's RDMA channel, which persists
// across files: it asks nothing first (no RADR).
bool rides_the_rdma_channel(const Session &session, const Options &o) {
    return o.transport != Transport::tcp && session.rdma && session.rdma->usable();
}

// What both directions need: a session settled on its data path, so the
// next file asks nothing before its transfer command (no RADR, no OPTS
// PARALLEL), a name FTP can carry, and no --verify. Settled is the RDMA
// channel up, or TCP with the OPTS PARALLEL in force the one a file of this
// size asks for. The hook runs only while a transfer keeps its path: the
// channel, or the granted streams' connections. (-c is each direction's
// own to weigh.)
bool takes_the_kept_path(const Session &session, const Options &o, const FileJob &next, uint64_t size) {
    if (o.verify || !ftp_can_carry(next.remote)) return false;
    if (rides_the_rdma_channel(session, o)) return true;
    if (o.transport != Transport::tcp && (session.rdma || !session.rdma_declined)) return false;
    const unsigned streams = size > o.block_size ? tcp_streams_for(session, o, size) : 1;
    return session.parallel_in_force && session.parallel_asked_streams == streams &&
           session.parallel_asked_block == o.block_size;
}

}  // namespace

bool downloads_with_size_and_retr_alone(const Session &session, const Options &o, const FileJob &next) {
    // Without the listing's time, the partial file's check asks MDTM first.
    if (!next.size || !next.modify) return false;
    // -c over a partial file asks REST, and over a whole one nothing at all:
    // checked below as a file there.
    if (!takes_the_kept_path(session, o, next, *next.size)) return false;
    auto dest = destination_at(next.local);
    if (!dest || dest->direct) return false;
    return !o.resume || (!exists(dest->write_path) && !exists(dest->final_path));
}

std::optional<uint64_t> uploads_with_allo_and_stor(const Session &session, const Options &o, const FileJob &next) {
    struct stat st {};
    if (::stat(next.local.c_str(), &st) < 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    const auto size = static_cast<uint64_t>(st.st_size);
    // From this size on, SRCE goes before the ALLO too.
    // -c asks the server what it holds first.
    if (o.resume || size >= kAnnounceSizeFrom || !takes_the_kept_path(session, o, next, size)) return std::nullopt;
    return size;
}

namespace {

bool small(const FileJob &job) { return job.size && *job.size < kAheadOfFilesBelow; }

}  // namespace

bool send_get_ahead(Session &session, const Options &o, const FileJob &current, const FileJob &next) {
    if (!small(current) || !downloads_with_size_and_retr_alone(session, o, next)) return false;
    // A failed send leaves the connection broken; the reply read next says so.
    const bool rdma = rides_the_rdma_channel(session, o);
    // Over TCP a transfer sent ahead and not wanted ends with its kept
    // connections (several may be ahead); over RDMA with ABOR (one is).
    if (rdma) session.control.set_unwanted_transfer_end({});
    else session.control.set_unwanted_transfer_end([&kept = session.kept_data] { kept.clear(); });
    (void)session.control.send_ahead({"SIZE " + next.remote, (rdma ? "RRTR " : "RETR ") + next.remote});
    return true;
}

std::size_t unechoed_window(uint32_t control_rtt_us, unsigned pipeline_max) {
    const std::size_t may_wait = pipeline_max ? pipeline_max : kUnsaidPipeline;
    const std::size_t within = std::max<std::size_t>(1, may_wait / 2 / kLinesPerFileAhead);
    const std::size_t for_path =
        std::clamp<std::size_t>(control_rtt_us / kPathMicrosPerFileAhead, kLeastFilesAhead, kMostFilesAhead);
    return std::min(for_path, within);
}

std::size_t get_ahead_window(const Session &session, const Options &o) {
    if (!session.data_keep_unechoed || rides_the_rdma_channel(session, o)) return 1;
    return unechoed_window(session.control_rtt_us, session.features.pipeline_max);
}

bool send_put_ahead(Session &session, const Options &o, const FileJob &current, const FileJob &next) {
    if (!small(current)) return false;
    auto size = uploads_with_allo_and_stor(session, o, next);
    if (!size) return false;
    session.control.set_unwanted_transfer_end({});  // one ahead: ABOR
    // RSTR takes no ALLO: the channel's file_begin announces the size.
    if (rides_the_rdma_channel(session, o))
        (void)session.control.send_ahead({"RSTR " + next.remote});
    else
        (void)session.control.send_ahead({"ALLO " + std::to_string(*size), "STOR " + next.remote});
    return true;
}

}  // namespace rftp::client
