// What the per-file transfer functions (get_one_file, put_one_file) report
// back, and how they show progress. One file or thousands, the same function
// moves each file; only these hooks differ between the two.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/progress/batch_progress.h"
#include "client/progress/progress_reporter.h"

namespace rftp::client {

struct FileReport {
    uint64_t bytes = 0;     // payload moved for this file in this run (a resumed prefix excluded)
    unsigned streams = 0;   // data connections used; 0 when nothing was sent
    bool skipped = false;   // -c found the file already complete
    std::string transport;  // "rdma" or "tcp" once bytes moved
    std::string notice;     // RDMA: how the sink learned of filled blocks (write_with_imm, write_then_send)
    std::string tls_path;   // PROT P: who made the data's TLS records (KernelTls::name())
    double transfer_seconds = 0;  // the data phase alone: no login, no channel setup
    std::optional<std::string> sha256;  // the local file's, taken during the transfer (--verify)
    std::optional<int64_t> mtime_set;   // sync: the modification time the copy was given
    std::optional<uint64_t> size_copied;  // sync: the copy's size (the source may have changed since the plan)
    std::vector<std::string> notes;  // worth knowing, not errors (e.g. fallback to one stream)

    // Logged at -v and kept for the JSON summary.
    void note(const std::string &text);
};

struct Session;

struct FileProgressHooks {
    ProgressView per_file;           // one file: its own progress line and JSON progress events
    BatchProgress *batch = nullptr;  // many files: the bytes feed the one aggregate line
    // Many files: called once this file's data moved on kept connections,
    // before its final reply is read, to send the next file's commands
    // ahead (docs/protocol.md, "Files in a row"). Empty: nothing goes ahead.
    std::function<void(Session &)> send_next_ahead;
};

}  // namespace rftp::client
