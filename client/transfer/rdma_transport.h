// The client's side of the RDMA extension: set up the session's channel with
// RADR on the first file (or decide, once, with one line saying why, that
// this session uses TCP), and move one file over it with RSTR or RRTR.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/transfer/file_report.h"
#include "client/transfer/data_path.h"
#include "client/exit_codes.h"
#include "client/session.h"
#include "middleware/disk/disk_file.h"
#include "middleware/range_set.h"
#include "middleware/rdma/channel.h"
#include "middleware/resume_journal.h"

namespace rftp::client {

// The session's channel, set up now if needed; nullptr when this file goes
// over TCP (--transport tcp, or auto and RDMA cannot be had: the reason is
// said once per session). With --transport rdma, no channel is a failure.
Outcome<middleware::rdma::Channel *> rdma_channel_for(Session &session, const Options &o, FileReport &report);

// A file over the session's RDMA channel: RSTR or RRTR moves it by RDMA
// WRITEs into blocks the sink granted (docs/protocol.md, "RDMA channel").
class RdmaTransport : public DataPath {
public:
    using Move = std::function<Result<middleware::rdma::FileResult>(middleware::rdma::Channel &,
                                                                    middleware::TransferProgress &)>;
    RdmaTransport(middleware::rdma::Channel &channel, Move move);

    OutcomeStatus connect(Session &) override { return {}; }  // the channel is up already
    // The channel persists across files: the next file's commands may go ahead.
    bool keeps_connections() const override { return true; }
    std::vector<int> interruptible() const override { return {}; }
    Status move(middleware::TransferProgress &progress) override;
    void finish(FileReport &report) override;
    void interrupted(Session &session) override;
    std::unexpected<Failure> failed(Session &session, const Error &error, const std::string &what) override;

private:
    middleware::rdma::Channel &channel_;
    Move move_;
    Result<middleware::rdma::FileResult> moved_ = fail_msg("not moved");
};

// This side sends: the file's SHA-256 taken on the way if spec.digest.
RdmaTransport rdma_upload(middleware::rdma::Channel &channel, const middleware::rdma::SendSpec &spec);
// This side receives: received records what arrived (its contiguous end is
// where a resume starts) and feeds the resume journal, if any, whose failed
// checkpoint stops the transfer.
RdmaTransport rdma_download(middleware::rdma::Channel &channel, middleware::rdma::ReceiveSpec spec,
                            middleware::RangeSet &received, middleware::ResumeJournal *journal);

}  // namespace rftp::client
