// The exit status of rftp is its contract with scripts, so every failure is
// classified exactly once, where its cause is known, and carried up as a
// value to main. docs/cli.md documents the same table.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <utility>

#include "common/result.h"

namespace rftp::client {

enum class ExitCode : int {
    ok = 0,
    differs = 1,        // check: the trees (or the tree and its manifest) differ
    usage = 2,          // bad command line or URL
    connection = 3,     // resolve/connect/timeout, control connection lost
    auth = 4,           // login refused or no password available
    remote_file = 5,    // server refused the file operation (4xx/5xx)
    local_file = 6,     // cannot read/write/rename a local file, disk full
    verification = 7,   // size or digest mismatch after a transfer
    transfer = 8,       // data connection broke mid-way, 426/451: retry with -c
    delete_limit = 9,   // sync --delete would remove more than --max-delete allows: nothing removed
    interrupted = 130,  // SIGINT/SIGTERM; the partial file is kept for -c
};

inline int to_int(ExitCode c) { return static_cast<int>(c); }

// Whether -c continues a file that failed so: one cut off (8, or 3 once
// bytes had moved: the server went away, as rftpd does with 421 when it is
// restarted) or interrupted (130). After a mismatch (7) the partial file is
// gone and the file must come anew.
inline bool resumable_failure(ExitCode c, uint64_t bytes_moved) {
    return c == ExitCode::transfer || c == ExitCode::interrupted || (c == ExitCode::connection && bytes_moved > 0);
}

// With --continue-on-error the run exits with its most severe file failure.
// Most severe first: an interrupt, then wrong bytes (verification), then a
// local problem (disk full hits every file), a broken transfer (retry with
// -c), the connection, the login, and last a refusal of one file.
inline int severity(ExitCode c) {
    switch (c) {
        case ExitCode::interrupted: return 8;
        case ExitCode::verification: return 7;
        case ExitCode::local_file: return 6;
        case ExitCode::transfer: return 5;
        case ExitCode::connection: return 4;
        case ExitCode::auth: return 3;
        case ExitCode::remote_file: return 2;
        case ExitCode::delete_limit: return 1;
        case ExitCode::differs: return 1;
        case ExitCode::usage: return 1;
        case ExitCode::ok: return 0;
    }
    return 0;
}

// A failure that already knows which exit status it deserves.
struct Failure {
    ExitCode exit = ExitCode::connection;
    std::string message;
};

// The control connection is gone (or the user stopped): nothing more can
// be done on this session, so many-file planning ends rather than going on.
inline bool session_lost(const Failure &f) {
    return f.exit == ExitCode::connection || f.exit == ExitCode::interrupted;
}

template <class T>
using Outcome = std::expected<T, Failure>;
using OutcomeStatus = Outcome<void>;

inline std::unexpected<Failure> fail_as(ExitCode exit, std::string message) {
    return std::unexpected<Failure>(Failure{exit, std::move(message)});
}
inline std::unexpected<Failure> fail_as(ExitCode exit, const Error &error) {
    return fail_as(exit, error.message);
}

}  // namespace rftp::client
