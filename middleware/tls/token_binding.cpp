#include "middleware/tls/token_binding.h"

#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {

Result<wire::Token> bind_token(SSL *control, const wire::Token &nonce) {
    static constexpr char kLabel[] = "EXPORTER-rftp-rdma-channel";
    wire::Token bound{};
    clear_openssl_errors();
    if (SSL_export_keying_material(control, bound.data(), bound.size(), kLabel, sizeof kLabel - 1, nonce.data(),
                                   nonce.size(), 1) != 1)
        return fail(tls_error("TLS exporter for the RDMA token"));
    return bound;
}

}  // namespace rftp::middleware::tls
