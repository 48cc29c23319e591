// kTLS: the kernel carrying a connection's TLS records itself (CONFIG_TLS,
// the "tls" TCP upper layer). Where it does, bytes written to the socket
// leave as records, encrypted by the kernel: that side needs no cipher in
// user space and no BIO pair to copy through. Records read are decrypted
// likewise.
//
// OpenSSL decides, per connection and per direction, at the end of the
// handshake: it hands the keys to the kernel when the socket is its BIO, the
// kernel has the module, and the cipher is one the kernel knows (AES-GCM,
// ChaCha20-Poly1305). OpenSSL 3.0 (Debian 12) does so for sending under
// TLS 1.2 and 1.3, and for receiving under TLS 1.2 only; newer releases
// receive under TLS 1.3 too. Whatever the kernel does not carry stays with
// OpenSSL in the relay (tls_relay.h).
#pragma once

#include <openssl/ssl.h>

#include <string>

namespace rftp::middleware::tls {

// Whether this kernel can carry TLS records at all.
bool kernel_has_ktls();

// Asks OpenSSL to hand the connection to the kernel where it can. Call it
// before the handshake, on a connection whose BIO will be its socket.
void offer_kernel_tls(SSL *ssl);

// Which directions the kernel carries, once the handshake is done.
struct KernelTls {
    bool send = false;
    bool receive = false;
    // How a log line or a summary names it: "ktls" (both ways),
    // "ktls_send", "ktls_receive", or "relay" (OpenSSL both ways).
    std::string name() const;
};
KernelTls kernel_tls_in_use(SSL *ssl);

}  // namespace rftp::middleware::tls
