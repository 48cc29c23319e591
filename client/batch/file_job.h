// One file of a many-file transfer, and how it ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/transfer/file_report.h"
#include "client/exit_codes.h"

namespace rftp::client {

struct FileJob {
    std::string local;   // put: the source file; get: the final local path
    std::string remote;  // absolute path on the server
    // As planning saw it (local stat, or the listing's size): larger files
    // start first. Absent: unknown, started after those known.
    std::optional<uint64_t> size;
    std::optional<std::string> modify;  // get: the listing's modification time (MLSD)
    // sync: a file the destination already has, copied again from the start
    // (never continued: its partial, if any, belongs to an older version).
    bool replaces = false;
    std::string relative;  // sync: the path beneath both tops
    std::optional<int64_t> source_mtime;  // sync: the time the copy is given
};

struct FileResult {
    FileJob job;
    FileReport report;
    std::optional<Failure> failure;  // absent: ok (or skipped, see report)
    double seconds = 0;
};

}  // namespace rftp::client
