// One RAII owner per OpenSSL object, as verbs_handles.h has for verbs: a
// handle frees its object on every path, and ownership moves are explicit.
#pragma once

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>

namespace rftp::middleware::tls {

struct SslCtxFree {
    void operator()(SSL_CTX *c) const { SSL_CTX_free(c); }
};
struct SslFree {
    void operator()(SSL *s) const { SSL_free(s); }
};
struct SslSessionFree {
    void operator()(SSL_SESSION *s) const { SSL_SESSION_free(s); }
};
struct X509Free {
    void operator()(X509 *x) const { X509_free(x); }
};
struct BioFree {
    void operator()(BIO *b) const { BIO_free_all(b); }
};

using UniqueSsl = std::unique_ptr<SSL, SslFree>;
using UniqueSslSession = std::unique_ptr<SSL_SESSION, SslSessionFree>;
using UniqueX509 = std::unique_ptr<X509, X509Free>;
using UniqueBio = std::unique_ptr<BIO, BioFree>;

// Contexts are shared: a session keeps the context it started with while a
// reloaded certificate makes a new one for the sessions that follow.
using SharedSslCtx = std::shared_ptr<SSL_CTX>;
inline SharedSslCtx share(SSL_CTX *ctx) { return SharedSslCtx(ctx, SslCtxFree{}); }

}  // namespace rftp::middleware::tls
