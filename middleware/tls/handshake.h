// A TLS handshake on a connected socket, bounded in time and cancellable,
// for the threads that own a socket (data connections, the client's control
// connection). The event loop's control connections use memory_tls.h.
#pragma once

#include <atomic>

#include "common/result.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::middleware::tls {

// Attaches ssl to fd and runs its handshake (as client or server, whichever
// ssl was set up as). Fails after timeout_ms, or soon after *cancelled is
// set. fd keeps its blocking mode.
Status handshake(SSL *ssl, int fd, int timeout_ms, const std::atomic<bool> *cancelled = nullptr);

}  // namespace rftp::middleware::tls
