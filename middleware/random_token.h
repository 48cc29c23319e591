// Fresh tokens from the system's random source (OpenSSL RAND_bytes): an RDMA
// channel's, and a session's data-connection token.
#pragma once

#include "common/result.h"
#include "protocol/token.h"

namespace rftp::middleware {

Result<wire::Token> new_random_token();

}  // namespace rftp::middleware
