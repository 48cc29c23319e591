// Modification times for sync: the copy gets its source's time, so the next
// run can compare them (docs/protocol.md "Modification times: MFMT").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/session.h"

namespace rftp::client {

// MFMT where the server offers it, else the two-argument MDTM that vsftpd
// and others take. A refusal is returned as such (exit 5).
OutcomeStatus set_remote_mtime(Session &session, const std::string &path, int64_t seconds);

// MDTM path: the time of one remote file, for servers whose listing gives
// none (LIST). Absent when the server refuses.
Outcome<std::optional<int64_t>> remote_mtime(Session &session, const std::string &path);

// utimensat on a local file (its access time left alone).
OutcomeStatus set_local_mtime(const std::string &path, int64_t seconds);

}  // namespace rftp::client
