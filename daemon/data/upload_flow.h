// The steps every upload takes, whatever carries its bytes (one TCP stream,
// framed parallel streams, an RDMA channel): open the partial file beside
// the final name, journal the complete prefix when blocks may land out of order,
// receive, keep only the complete prefix on failure so REST resumes
// correctly, and rename into place only when everything arrived.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/data/transfer_job.h"
#include "daemon/data/upload_target.h"
#include "middleware/range_set.h"

namespace rftp::daemon {

struct UploadRequest {
    std::string path;          // virtual path of the final name
    uint64_t rest = 0;         // REST offset
    bool append = false;       // APPE
    // Bytes arrive as blocks that may land out of order (framed streams and
    // RDMA keep several writes in flight): a resume journal records the
    // complete prefix meanwhile, and the file is cut to it at the end.
    bool ranged = false;
    // Written in order and synchronously (ASCII mode): the partial's size is
    // the resume point, and there is no journal (its prefix would not move).
    bool in_order = false;
    bool sync = true;          // fdatasync before the rename into place (storage.sync_before_rename)
    // The file's final size when known before its bytes (ALLO): [rest,
    // size) is reserved before any data connection opens (storage.preallocate).
    std::optional<uint64_t> reserve_size;
    // The local file the client sends from (SRCE), recorded on the partial
    // file; none forgets an earlier record, whose bytes may now be mixed.
    std::optional<std::string> source;
    // HOLD: once complete and synced, the partial file stays where it is
    // (still recording its source, for a resume) and the outcome hands it
    // over, locked, for COMT to put in place.
    bool hold = false;
};

// Moves the bytes into target (opening data connections, sending 150 and so
// on is its business); records every range in received and reports a grown
// complete prefix through on_prefix_grown.
using UploadReceiver = std::function<Status(UploadTarget &target, middleware::RangeSet &received,
                                            const std::function<void(uint64_t)> &on_prefix_grown)>;

// Runs the whole upload and returns the final reply. open_failed is true
// when receive failed before any data connection existed (the reply is 425).
TransferOutcome run_upload(const UserRoot &root, const UploadRequest &request, TransferJob &job,
                           const UploadReceiver &receive);

}  // namespace rftp::daemon
