// Binds the RDMA channel's token to the control connection's TLS session
// (RFC 8446 §7.5, RFC 5705 exporters). The RADR reply carries a random
// nonce; the queue pairs must show the value both ends export from their
// TLS session with that nonce as context. A token seen anywhere else (a
// log, a packet capture of the RDMA connect) is worthless without the TLS
// session's secrets, and a session that is not the one that asked cannot
// produce it.
#pragma once

#include <openssl/ssl.h>

#include "common/result.h"
#include "protocol/token.h"

namespace rftp::middleware::tls {

Result<wire::Token> bind_token(SSL *control, const wire::Token &nonce);

}  // namespace rftp::middleware::tls
