// A logged-in control connection and what the server offers: connect, greet,
// USER/PASS/ACCT, FEAT. Every command starts from one of these.
#pragma once

#include "client/cli/options.h"
#include "client/exit_codes.h"
#include "middleware/tls/kept_connections.h"
#include "middleware/tls/openssl_handles.h"
#include "protocol/features.h"
#include "client/ftp_connection.h"
#include "client/url.h"
#include "middleware/tcp/stream_cache.h"
#include "middleware/rdma/channel.h"
#include "middleware/tcp/parallel_transfer.h"
#include "protocol/token.h"

#include <map>
#include <memory>
#include <optional>

namespace rftp::client {

class LoginTicketShelf;

// The login ticket a session got for its run's other sessions
// (login_ticket.h): forgotten when the session is closed.
struct IssuedTicket {
    std::shared_ptr<LoginTicketShelf> shelf;
    uint64_t generation = 0;
};

struct Session {
    FtpConnection control;
    ftp::Features features;
    bool epsv_refused = false;  // remembered so PASV is used right away next time
    // The control connection's round trip after login, as the kernel
    // measured it (TCP_INFO, the least seen); 0 unknown. It sizes the TCP
    // streams (path_streams.h) and the downloads sent ahead (files_ahead.h).
    uint32_t control_rtt_us = 0;
    // OPTS PARALLEL n>=1 is in force: every later RETR/STOR of this session is
    // framed, so a session reused for the next file must know to switch it off.
    bool parallel_in_force = false;
    // What the last OPTS PARALLEL asked and was granted, so the next file
    // with the same request skips a round trip.
    unsigned parallel_asked_streams = 0;
    uint64_t parallel_asked_block = 0;
    unsigned parallel_granted_streams = 0;
    uint64_t parallel_granted_block = 0;
    // The RDMA channel (RADR), set up for the first file and reused by the
    // next; rdma_declined once this session settled on TCP.
    std::unique_ptr<middleware::rdma::Channel> rdma;
    bool rdma_declined = false;
    // OPTS BLOCKSUM as agreed: whether framed and RDMA blocks carry a CRC32C.
    bool block_checksums = true;
    // An aborted transfer's replies were not all read (abort_transfer): the
    // next reply may be an old one, so this session must not be reused.
    bool out_of_step = false;
    // The server answered LIST -a with a 5xx: its listings are asked for plainly.
    bool list_refuses_options = false;
    // OPTS DATATOKEN's answer: shown first on every data connection
    // (protocol/data_token.h). Without it (another server, or refused) they go bare.
    std::optional<wire::Token> data_token;
    bool data_token_asked = false;  // asked at the first data connection, once
    // OPTS DATAKEEP ON was granted: a framed transfer that ends with 226
    // leaves its connections in kept_data for the next one of as many
    // streams (docs/protocol.md, "Kept data connections").
    bool data_keep = false;
    // ... with UNECHOED: a download of one block on them ends at its EOD
    // frame, and the next file's frames may follow at once.
    bool data_keep_unechoed = false;
    bool data_keep_asked = false;
    middleware::tls::KeptConnections kept_data;  // under PROT P with their TLS
    // PROT P is in force: every data connection is TLS, resuming the control
    // connection's session (data_connection.h).
    bool protect_data = false;
    middleware::tls::SharedSslCtx tls_ctx;
    std::string tls_host;  // the name the certificates must carry
    std::string pinned_pubkey;  // --pinned-pubkey, checked on data connections that do not resume
    IssuedTicket issued_ticket;
    // TCP transfer buffers and rings kept from one file to the next (stream_cache.h).
    std::unique_ptr<middleware::StreamCache> stream_kept = std::make_unique<middleware::StreamCache>();
    // Directories' MLSD lines from one MLSR of a tree's top, by path, each
    // taken once by the walk instead of its own MLSD (remote_tree.h).
    std::map<std::string, std::string> tree_listings;
};

// Whether connections may be kept at all: in clear, or under PROT P with
// their TLS where FEAT says DATAKEEP ... TLS (docs/protocol.md).
inline bool keeps_under_this_protection(const Session &session) {
    return !session.protect_data || session.features.data_keep_tls;
}
// Whether this session's framed connections stay open after a transfer
// that ends well.
inline bool keeps_data_connections(const Session &session) {
    return session.data_keep && keeps_under_this_protection(session);
}

// Connects, secures the control connection as options.tls says (TLS by
// default for every host that is not loopback), logs in, asks FEAT.
// tickets: the run's login ticket (login_ticket.h), where more sessions
// may follow; nullptr logs in with the password alone.
Outcome<Session> open_session(const Url &url, const Options &options,
                              const std::shared_ptr<LoginTicketShelf> &tickets = nullptr);

// "what: 550 No such file." as a Failure classified by classify_refusal.
std::unexpected<Failure> refused(const std::string &what, const ftp::Reply &reply);

// Sends QUIT and reads the goodbye, ignoring failures: the work is done.
void close_session(Session &session);

}  // namespace rftp::client
