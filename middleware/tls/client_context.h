// The client's TLS: whom it trusts (the system's CA store, or a site CA),
// the host name or address the certificate must name, and an optional
// pinned public key (curl's --pinned-pubkey "sha256//<base64>").
#pragma once

#include <string>

#include "common/result.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::middleware::tls {

struct ClientTlsSettings {
    std::string ca_file;        // PEM bundle; empty: the system's CA store
    std::string pinned_pubkey;  // "sha256//<base64>[;sha256//<base64>...]"; empty: none
    int min_version = TLS1_2_VERSION;
};

Result<SharedSslCtx> make_client_context(const ClientTlsSettings &settings);

// A connection to host (a name or a numeric address), not yet handshaken:
// it checks the certificate's chain and name during the handshake, offers
// ALPN "ftp", and resumes session when given one (data connections).
Result<UniqueSsl> new_client_connection(SSL_CTX *ctx, const std::string &host, SSL_SESSION *session = nullptr);

// After a handshake that failed: why, naming what did not match
// ("certificate has expired", "hostname mismatch" ...) when it was the
// certificate.
// handshake_error: what the handshake itself reported.
std::string handshake_failure(SSL *ssl, const std::string &host, const std::string &handshake_error);

// After a successful handshake: the pinned key, when one is set.
Status check_pinned_key(SSL *ssl, const std::string &pinned_pubkey);

}  // namespace rftp::middleware::tls
