#include "middleware/tls/alpn.h"

namespace rftp::middleware::tls {
namespace {

const unsigned char kFtp[] = {3, 'f', 't', 'p'};

int select_ftp(SSL *, const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned inlen, void *) {
    unsigned char *chosen = nullptr;
    if (SSL_select_next_proto(&chosen, outlen, kFtp, sizeof kFtp, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

}  // namespace

void require_ftp_alpn(SSL_CTX *server) { SSL_CTX_set_alpn_select_cb(server, &select_ftp, nullptr); }

void offer_ftp_alpn(SSL *client) { SSL_set_alpn_protos(client, kFtp, sizeof kFtp); }

}  // namespace rftp::middleware::tls
