#include "middleware/tls/server_context.h"

#include <openssl/pem.h>

#include <cstdio>
#include <cstring>

#include "middleware/tls/alpn.h"
#include "middleware/tls/session_binding.h"
#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {
namespace {

// A data connection made hours after the login must still resume the
// control connection's session: sessions and tickets last a day.
constexpr long kSessionLifetimeSeconds = 24 * 3600;

Result<UniqueX509> read_leaf(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "r");
    if (!f) return fail(Error::from_errno("certificate " + path + ": cannot read it"));
    UniqueX509 leaf(PEM_read_X509(f, nullptr, nullptr, nullptr));
    std::fclose(f);
    if (!leaf) return fail(tls_error("certificate " + path + ": no PEM certificate in it"));
    return leaf;
}

std::string time_text(const ASN1_TIME *t) {
    UniqueBio out(BIO_new(BIO_s_mem()));
    ASN1_TIME_print(out.get(), t);
    char *data = nullptr;
    long len = BIO_get_mem_data(out.get(), &data);
    return std::string(data, static_cast<std::size_t>(len));
}

Status check_validity(const std::string &path, X509 *leaf) {
    if (X509_cmp_current_time(X509_get0_notBefore(leaf)) >= 0)
        return fail_msg("certificate " + path + " is not valid yet: it starts " + time_text(X509_get0_notBefore(leaf)));
    if (X509_cmp_current_time(X509_get0_notAfter(leaf)) <= 0)
        return fail_msg("certificate " + path + " has expired: it ended " + time_text(X509_get0_notAfter(leaf)));
    return {};
}

Status check_readable(const std::string &what, const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "r");
    if (!f) return fail(Error::from_errno(what + " " + path + ": cannot read it"));
    std::fclose(f);
    return {};
}

}  // namespace

Result<SharedSslCtx> make_server_context(const ServerTlsSettings &settings) {
    clear_openssl_errors();
    auto leaf = read_leaf(settings.certificate);
    if (!leaf) return fail(leaf.error());
    if (auto valid = check_validity(settings.certificate, leaf->get()); !valid) return fail(valid.error());
    if (auto readable = check_readable("key", settings.key); !readable) return fail(readable.error());

    SharedSslCtx ctx = share(SSL_CTX_new(TLS_server_method()));
    if (!ctx) return fail(tls_error("TLS context"));
    SSL_CTX *c = ctx.get();
    SSL_CTX_set_min_proto_version(c, settings.min_version);
    if (SSL_CTX_use_certificate_chain_file(c, settings.certificate.c_str()) != 1)
        return fail(tls_error("certificate " + settings.certificate));
    if (SSL_CTX_use_PrivateKey_file(c, settings.key.c_str(), SSL_FILETYPE_PEM) != 1)
        return fail(tls_error("key " + settings.key));
    if (SSL_CTX_check_private_key(c) != 1)
        return fail(tls_error("key " + settings.key + " does not belong to certificate " + settings.certificate));
    // Renegotiation has no use in FTP and a history of attacks.
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_timeout(c, kSessionLifetimeSeconds);
    static const unsigned char kContextId[] = "rftpd";
    SSL_CTX_set_session_id_context(c, kContextId, sizeof kContextId - 1);
    install_session_binding(c);
    require_ftp_alpn(c);
    return ctx;
}

}  // namespace rftp::middleware::tls
