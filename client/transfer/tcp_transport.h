// A file over TCP data connections (docs/protocol.md): one plain stream,
// or blocks framed with their offset and CRC32C over several connections.
// The connection handling is one class; what crosses them is one of four
// moves (plain or framed, sending or receiving), made below.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "client/data_connection.h"
#include "client/transfer/data_path.h"
#include "common/unique_fd.h"
#include "middleware/disk/disk_file.h"
#include "middleware/range_set.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/stream_transfer.h"

namespace rftp::client {

class TcpTransport : public DataPath {
public:
    using MoveOver = std::function<Status(std::span<const int> fds, middleware::TransferProgress &progress)>;
    // Which side this one is decides whose word a failure takes: a download
    // reads the server's reply only when the server reset the connections
    // (it ended them, and says why: 451, no thread to spare); an upload
    // always gives the server two seconds to say why it stopped reading.
    enum class Side { download, upload };

    // framed: the move is framed_send or framed_receive, whose connections
    // the session may keep for its next file (keeps_data_connections).
    TcpTransport(Side side, unsigned streams, bool framed, MoveOver move)
        : side_(side), streams_(streams), framed_(framed), move_(std::move(move)) {}

    OutcomeStatus connect(Session &session) override;
    OutcomeStatus started(Session &session) override;
    std::string protection() const override { return relays_.empty() ? "" : "TLS"; }
    bool keeps_connections() const override { return keep_; }
    std::vector<int> interruptible() const override { return fds_; }
    Status move(middleware::TransferProgress &progress) override;
    void finish(FileReport &report) override;
    std::unexpected<Failure> failed(Session &session, const Error &error, const std::string &what) override;

private:
    // move_, then under PROT P each relay's end checked (and, unless kept, closed).
    Status checked_move(middleware::TransferProgress &progress);

    Side side_;
    unsigned streams_;
    bool framed_;
    MoveOver move_;
    Session *session_ = nullptr;
    bool keep_ = false;   // the connections go back to the session if the move succeeds
    bool moved_ = false;
    std::vector<UniqueFd> connections_;
    DataTlsRelays relays_;  // under PROT P; fds_ are then their plain ends
    int finish_ms_ = 0;     // how long the relays may take to send what move() wrote
    std::vector<int> fds_;
};

// How this session's framed connections end once their file's end is
// agreed: kept for the next file, or shut down (connection_end.h).
middleware::ConnectionEnd framed_connection_end(const Session &session);

// [offset, end) of fd on one plain stream.
TcpTransport::MoveOver plain_send(int fd, uint64_t offset, uint64_t end);
// Framed blocks; the digest taken on the way, if the plan asks, goes to sha256.
TcpTransport::MoveOver framed_send(middleware::ParallelSendPlan plan, std::optional<std::string> &sha256);

struct PlainReceive {
    int fd = -1;
    uint64_t offset = 0;
    middleware::StreamCache *kept = nullptr;
    middleware::disk::Placement placement = middleware::disk::Placement::at_offsets;
    std::function<void(uint64_t)> on_prefix_grown;
};
// One plain stream into fd from offset; end: where the file ended.
TcpTransport::MoveOver plain_receive(PlainReceive spec, uint64_t &end);
// Framed blocks into plan.file_fd; received tells which ranges arrived, end
// its complete prefix. The streams must announce plan.max_size exactly and
// leave no hole: anything else is a file that changed on the server.
TcpTransport::MoveOver framed_receive(middleware::ParallelReceivePlan plan, middleware::RangeSet &received,
                                      std::optional<std::string> &sha256, uint64_t &end);

}  // namespace rftp::client
