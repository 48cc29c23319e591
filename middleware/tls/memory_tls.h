// TLS for a connection an event loop owns: bytes from the network go in,
// plain bytes come out, and what must be sent (handshake, records, alerts)
// waits in a buffer for the loop to write. Nothing here touches a socket,
// so the loop never blocks on TLS.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::middleware::tls {

class MemoryTls {
public:
    // A server side connection on ctx, waiting for the client's hello.
    static Result<MemoryTls> accept(SSL_CTX *ctx);

    // Takes bytes read from the network; appends what they decrypt to
    // plain. An error means the connection is beyond repair (a bad record,
    // a failed handshake); peer_closed() tells a clean close_notify.
    Status take_in(std::string_view from_network, std::string &plain);
    // Encrypts plain for the network (see drain); before the handshake is
    // done (implicit TLS's greeting) it waits for it.
    Status put_out(std::string_view plain);
    // Queues a close_notify.
    void close_notify();
    // What is to be written to the network now, emptied.
    std::string drain();

    bool handshake_done() const { return SSL_is_init_finished(ssl_.get()) == 1; }
    bool peer_closed() const { return peer_closed_; }
    SSL *ssl() const { return ssl_.get(); }

private:
    MemoryTls() = default;
    UniqueSsl ssl_;
    BIO *from_network_ = nullptr;  // owned by ssl_
    BIO *to_network_ = nullptr;    // owned by ssl_
    bool peer_closed_ = false;
    std::string pending_;  // put out before the handshake was done

    Status flush_pending();
};

}  // namespace rftp::middleware::tls
