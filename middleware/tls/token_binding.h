// Binds the RDMA channel's tokens to the control connection's TLS session
// (RFC 8446 §7.5, RFC 5705 exporters). The RADR reply carries a random
// nonce; queue pair i must show the value both ends export from their TLS
// session with the nonce and i as context. The RADR reply's token alone is
// worthless without the TLS session's secrets, and a queue pair's value,
// read from its connect request on the RDMA network, opens no other.
#pragma once

#include <openssl/ssl.h>

#include "common/result.h"
#include "protocol/rdma_connect.h"

namespace rftp::middleware::tls {

Result<wire::ChannelTokens> bind_tokens(SSL *control, const wire::ChannelToken &nonce, unsigned queue_pairs);

}  // namespace rftp::middleware::tls
