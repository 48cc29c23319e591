// Where an upload's bytes go: the partial file beside the final name, opened
// at the right offset, renamed into place only when complete
// (docs/protocol.md, "Uploads").
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"
#include "daemon/vfs/user_root.h"

namespace rftp::daemon {

struct UploadTarget {
    UniqueFd fd;          // the partial file, locked against a second uploader
    std::string partial;  // its virtual path
    std::string final;    // where it goes when complete
    uint64_t start = 0;   // offset the incoming data begins at
};

// rest: REST offset (0: a new upload). append: APPE, which continues the
// partial file or the existing file from its end. Refusals of its own carry
// their ErrorKind: bad_offset (a restart offset that does not fit), busy
// (another session uploads the file), reserved_name (one of rftpd's names).
Result<UploadTarget> prepare_upload(const UserRoot &root, const std::string &vpath, uint64_t rest, bool append);

// Cuts a partial upload back to the prefix its journal vouches for, unless an
// upload holds it right now; the journal stays until the next upload of the
// file replaces it. Needed after a crash: then the partial file may hold
// blocks beyond holes, or (after a power loss) zeros where writes were lost,
// and its size would lie.
Status repair_partial_upload(const UserRoot &root, const std::string &partial_vpath);

// Renames the partial file onto its final name.
Status commit_upload(const UserRoot &root, const UploadTarget &target);

// Whether target's partial name still names the very file its upload wrote.
bool held_file_is_there(const UserRoot &root, const UploadTarget &target);

}  // namespace rftp::daemon
