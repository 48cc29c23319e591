// The client's side of the RDMA extension: set up the session's channel with
// RADR on the first file (or decide, once, with one line saying why, that
// this session uses TCP), and move one file over it with RSTR or RRTR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/transfer/file_report.h"
#include "client/exit_codes.h"
#include "client/session.h"
#include "middleware/disk/disk_file.h"
#include "middleware/range_set.h"
#include "middleware/resume_journal.h"

namespace rftp::client {

// The session's channel, set up now if needed; nullptr when this file goes
// over TCP (--transport tcp, or auto and RDMA cannot be had: the reason is
// said once per session). With --transport rdma, no channel is a failure.
Outcome<middleware::rdma::Channel *> rdma_channel_for(Session &session, const Options &o, FileReport &report);

// What an RDMA upload sends: [offset, size) of fd. copied_first: bytes
// rftpd copies before its 150 (upload_resume.h), which it is given time for.
struct RdmaUpload {
    int fd = -1;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t copied_first = 0;
    bool hold = false;  // HOLD first: kept aside until COMT (hold_next_upload)
};

// Uploads with REST/RSTR over the channel.
// digest: take the file's SHA-256 from the blocks sent (report.sha256).
OutcomeStatus put_over_rdma(Session &session, middleware::rdma::Channel &channel, const RdmaUpload &upload,
                            const std::string &remote, const FileProgressHooks &hooks, FileReport &report,
                            bool digest);

// Downloads remote from offset into fd with REST/RRTR over the channel.
// received records what arrived (its contiguous end is where a resume
// starts) and feeds the resume journal, if any, whose failed checkpoint
// stops the transfer. digest: take the file's SHA-256 from the blocks
// written (report.sha256).
OutcomeStatus get_over_rdma(Session &session, middleware::rdma::Channel &channel, int fd, uint64_t offset,
                            std::optional<uint64_t> size, const std::string &remote, const FileProgressHooks &hooks,
                            FileReport &report, middleware::RangeSet &received,
                            middleware::ResumeJournal *journal, bool sequential, bool digest,
                            middleware::disk::Placement placement);

}  // namespace rftp::client
