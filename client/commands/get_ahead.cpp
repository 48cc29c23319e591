#include "client/commands/get_ahead.h"

#include <sys/stat.h>

#include "client/commands/get_one_file.h"

namespace rftp::client {
namespace {

bool exists(const std::string &path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// The streams get_over_tcp will ask for, and whether that asks nothing of
// the server: the same OPTS PARALLEL is in force and its connections are kept.
bool takes_the_kept_streams(const Session &session, const Options &o, uint64_t size) {
    const unsigned streams = size > o.block_size ? o.parallel : 1;
    return session.parallel_in_force && session.parallel_asked_streams == streams &&
           session.parallel_asked_block == o.block_size && !session.kept_data.empty() &&
           session.kept_data.size() == session.parallel_granted_streams;
}

}  // namespace

bool downloads_with_size_and_retr_alone(const Session &session, const Options &o, const FileJob &next) {
    // --verify asks HASH after each file; without the listing's time, -c's
    // check of the partial file asks MDTM first.
    if (o.verify || !next.size || !next.modify || !ftp_can_carry(next.remote)) return false;
    // A session that has settled on TCP asks no RADR.
    if (o.transport != Transport::tcp && (session.rdma || !session.rdma_declined)) return false;
    if (!takes_the_kept_streams(session, o, *next.size)) return false;
    auto dest = destination_at(next.local);
    if (!dest || dest->direct) return false;
    // -c over a partial file asks REST; over a whole one, nothing at all.
    return !o.resume || (!exists(dest->write_path) && !exists(dest->final_path));
}

void send_get_ahead(Session &session, const Options &o, const FileJob &next) {
    if (!downloads_with_size_and_retr_alone(session, o, next)) return;
    // A failed send leaves the connection broken; the reply read next says so.
    if (session.control.send_ahead("SIZE " + next.remote)) (void)session.control.send_ahead("RETR " + next.remote);
}

}  // namespace rftp::client
