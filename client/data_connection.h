// Passive data connections only (active mode does not cross NAT): EPSV,
// falling back to PASV when the server refuses it. The address announced by
// PASV is ignored in favour of the control connection's peer, as curl does,
// because servers behind NAT announce private addresses.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "client/exit_codes.h"
#include "client/session.h"
#include "common/unique_fd.h"
#include "middleware/tls/tls_relay.h"

namespace rftp::client {

// Asks for a passive port and opens count connections to it, each with
// --timeout as SO_RCVTIMEO/SO_SNDTIMEO. The transfer command comes after.
Outcome<std::vector<UniqueFd>> open_data_connections(Session &session, unsigned count);

// Sends the lines open_data_connections begins with ahead, to rftpd: its
// OPTS DATATOKEN where the session is still to take the token, then EPSV.
// They then share a round trip with the lines sent just before.
OutcomeStatus send_data_setup_ahead(Session &session);

// PROT P: once the transfer command's 1xx came, the TLS handshake on each
// connection, resuming the control connection's session (servers that bind
// data to the login require it), and a relay whose plain end the transfer
// engine uses (middleware/tls/tls_relay.h). Failures are exit 3.
using DataTlsRelays = std::vector<std::unique_ptr<middleware::tls::TlsRelay>>;
Outcome<DataTlsRelays> secure_data_connections(Session &session, std::vector<UniqueFd> &connections);

// Reads a whole (small) data stream into memory: listings. More than
// max_bytes is a failure (exit 5), so an endless stream cannot fill memory.
Outcome<std::string> read_all(int fd, std::size_t max_bytes);

}  // namespace rftp::client
