// ALPN "ftp" (the ALPACA cross-protocol fix): a TLS client that names a
// protocol must name FTP, so a browser's HTTPS request redirected to an FTP
// port fails in the handshake instead of being answered. Clients that send
// no ALPN at all (most FTP clients) are served.
#pragma once

#include <openssl/ssl.h>

namespace rftp::middleware::tls {

void require_ftp_alpn(SSL_CTX *server);
void offer_ftp_alpn(SSL *client);

}  // namespace rftp::middleware::tls
