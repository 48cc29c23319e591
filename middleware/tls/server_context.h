// The daemon's TLS context: its certificate chain and key, checked when
// loaded so a bad file stops the start (or a reload) with the file's name,
// and the settings every control and data connection shares.
#pragma once

#include <string>

#include "common/result.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::middleware::tls {

struct ServerTlsSettings {
    std::string certificate;  // PEM: the server's certificate, then its chain
    std::string key;          // PEM: the certificate's private key
    int min_version = TLS1_2_VERSION;
};

// Reads and checks both files: unreadable, unparsable, a key that does not
// match the certificate, and a certificate outside its validity period are
// errors that name the file.
Result<SharedSslCtx> make_server_context(const ServerTlsSettings &settings);

}  // namespace rftp::middleware::tls
