// What every command gets: the parsed options, the URL, and the summary it
// fills in for main's final report (human line or JSON "summary" event).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/login_ticket.h"
#include "client/session.h"
#include "client/cli/options.h"
#include "client/progress/progress_reporter.h"
#include "client/transfer/file_report.h"
#include "client/url.h"

namespace rftp::client {

// How the files of a many-file transfer ended.
struct FileCounts {
    std::size_t total = 0;    // every file planned, including those never attempted
    std::size_t ok = 0;
    std::size_t failed = 0;
    std::size_t skipped = 0;  // -c found them complete
    std::size_t unchanged = 0;  // sync: already the same at the destination
    std::size_t deleted = 0;    // sync --delete: removed from the destination
};

struct RunSummary {
    uint64_t bytes = 0;     // payload bytes moved in this run (not counting a resumed prefix)
    unsigned streams = 0;   // data connections (or RDMA queue pairs) used for the transfer
    std::string transport;  // "rdma" or "tcp"
    std::string notice;     // RDMA completion notice in use
    std::string tls_control;  // "TLSv1.3" when the control connection was TLS; empty: clear text
    std::string tls_data;     // "tls" (PROT P), "clear", or "rdma" (never encrypted)
    std::string tls_path;     // under PROT P: who made the records (KernelTls::name(): "ktls_send", "relay", ...)
    double transfer_seconds = 0;  // single file: the data phase alone
    std::vector<std::string> notes;  // things worth knowing that are not errors
    std::string resume_hint;         // command that continues an interrupted transfer
    std::optional<FileCounts> files; // set by many-file transfers
    std::optional<FileCounts> jobs;  // sync --job: replications (total, ok, failed)
};

// What TLS protected in this run, for the summary, -v and the done line.
void record_protection(RunSummary &summary, const Session &session, const FileReport &report);

struct CommandContext {
    const Options &options;
    Url url;
    ProgressView progress_view;
    RunSummary summary;
    // The run's login ticket: its first session asks for one when more
    // sessions may follow, and they log in with it.
    std::shared_ptr<LoginTicketShelf> login_tickets = std::make_shared<LoginTicketShelf>();

    // Logged at verbose level and kept for the JSON summary.
    void note(const std::string &text);
};

}  // namespace rftp::client
