// Uploads one file over an already logged-in session (TYPE I set, and HASH
// checked when --verify): the single-file `rftp put` and every session
// thread of a many-file put call this, so each file follows the same rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/transfer/file_report.h"
#include "client/exit_codes.h"
#include "client/session.h"
#include "common/unique_fd.h"

namespace rftp::client {

// A local regular file, opened before anything is sent so a bad source fails
// with exit 6 and no remote side effects.
struct UploadSource {
    std::string path;
    UniqueFd fd;
    uint64_t size = 0;
    bool device = false;  // a character device read for --size bytes
    // A regular file's size and modification time (protocol/source_identity.h):
    // what rftpd records on a partial upload, for a resume to compare.
    std::optional<std::string> identity;
};

// device_size: with --size, a character device (/dev/zero) may be the
// source; it is read for that many bytes (memory-to-memory measurements).
Outcome<UploadSource> open_upload_source(const std::string &path, std::optional<uint64_t> device_size = std::nullopt);

// Follows docs/protocol.md "Uploads": a plain STOR against any server, always
// framed against rftpd; with -c the resume offset comes from rftpd's
// ".name.rftp-part" (SIZE of it) or, elsewhere, from the SIZE of the target,
// and the rest is sent with REST+STOR (APPE when REST is refused, as lftp
// does). A remote file that already has the local size is reported skipped.
OutcomeStatus put_one_file(Session &session, const Options &o, const UploadSource &source, const std::string &remote,
                           const FileProgressHooks &hooks, FileReport &report);

}  // namespace rftp::client
