// One transfer command on the control connection, whatever carries its
// bytes: REST, the transport's connections, ALLO, HOLD, the command and
// its 150, the bytes with progress and Ctrl-C wired, then the final reply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/session.h"
#include "client/transfer/file_report.h"
#include "client/transfer/data_path.h"

namespace rftp::client {

struct TransferCommand {
    std::string verb;    // RETR, STOR, RRTR or RSTR
    std::string remote;
    std::string what;    // names the transfer in messages: "get /a/b"
    uint64_t offset = 0;                // REST first when above 0
    std::optional<uint64_t> size;       // the file's, when known (progress)
    std::optional<uint64_t> allocate;   // ALLO this first (STOR only)
    bool hold = false;                  // HOLD first (hold_next_upload)
    // A server that refuses REST gets APPE instead of STOR: the remote file
    // holds exactly the first offset bytes (a plain upload to another server).
    bool append_if_rest_refused = false;
    int start_timeout = 0;  // seconds to wait for the 150
};

OutcomeStatus run_transfer(Session &session, DataPath &transport, const TransferCommand &command,
                           const FileProgressHooks &hooks, FileReport &report);

}  // namespace rftp::client
