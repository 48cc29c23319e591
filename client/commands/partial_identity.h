// Which remote file a partial download holds the beginning of. A resume
// (-c) trusts the partial file's bytes only while the remote file is the
// same one: same size and same modification time. Both are recorded on the
// partial file itself (middleware/disk/source_attribute.h), which survives
// a crash with it; a remote file rewritten in place since (same size, new
// content) is then fetched anew instead of completed into a mix of both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/exit_codes.h"
#include "client/session.h"

namespace rftp::client {

// "size=<n> modify=<YYYYMMDDHHMMSS>", or nullopt when the modification time
// is unknown (the server has no MDTM and the listing gave none): the size
// alone says no more than a resume checks already.
std::optional<std::string> partial_identity(std::optional<uint64_t> size, const std::optional<std::string> &modify);

// The remote file's modification time: listed when the listing gave one
// (no round trip), else MDTM where the server offers it. Seconds only
// (ftp::time_val_seconds).
Outcome<std::optional<std::string>> remote_modify_time(Session &session, const std::string &path,
                                                       const std::optional<std::string> &listed);

}  // namespace rftp::client
