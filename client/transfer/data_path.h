// How one file's bytes cross between the transfer command's 150 and its
// final reply: a plain stream or framed streams on TCP data connections
// (tcp_transport.h), or the session's RDMA channel (rdma_transport.h).
// run_transfer (transfer_flow.h) takes every transport through the same
// steps; a transport says only what its own way of moving needs.
#pragma once

#include <expected>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "client/session.h"
#include "client/transfer/file_report.h"
#include "common/result.h"
#include "middleware/transfer_progress.h"

namespace rftp::client {

class DataPath {
public:
    virtual ~DataPath() = default;

    // Right before the transfer command: what must be there when the server
    // answers it (TCP: the data connections).
    virtual OutcomeStatus connect(Session &session) = 0;
    // After the transfer command's 1xx: what the data connections need
    // before bytes move (TCP under PROT P: their TLS).
    virtual OutcomeStatus started(Session &) { return {}; }
    // How the bytes are protected on the way, for the progress line ("TLS"), or "".
    virtual std::string protection() const { return ""; }
    // Whether the data connections stay for the next transfer when this one
    // ends with 226 (docs/protocol.md, "Kept data connections").
    virtual bool keeps_connections() const { return false; }
    // What Ctrl-C shuts down to stop move() at once (TCP: the connections).
    virtual std::vector<int> interruptible() const = 0;
    // The bytes, with progress counted in progress.
    virtual Status move(middleware::TransferProgress &progress) = 0;
    // After move(), however it ended: connections closed, and what the
    // report says of the transport (streams, digest, ...).
    virtual void finish(FileReport &report) = 0;
    // Ctrl-C ended the transfer: anything the transport must drop first.
    virtual void interrupted(Session &) {}
    // move() failed: what the user is told. The server may have ended the
    // transfer itself and say why (452: its disk is full), which beats the
    // data path's "connection reset"; a failure of this side's own (its
    // disk, a file that changed) keeps its own exit code.
    virtual std::unexpected<Failure> failed(Session &session, const Error &error, const std::string &what) = 0;
};

}  // namespace rftp::client
