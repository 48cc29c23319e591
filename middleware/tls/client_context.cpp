#include "middleware/tls/client_context.h"

#include <arpa/inet.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <vector>

#include "middleware/tls/alpn.h"
#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {
namespace {

bool is_numeric_address(const std::string &host) {
    unsigned char buf[16];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 || ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string base64(const unsigned char *data, std::size_t len) {
    std::vector<unsigned char> out(4 * ((len + 2) / 3) + 1);
    int n = EVP_EncodeBlock(out.data(), data, static_cast<int>(len));
    return std::string(reinterpret_cast<char *>(out.data()), static_cast<std::size_t>(n));
}

// sha256//<base64 of the SHA-256 of the DER SubjectPublicKeyInfo>, as curl writes it.
std::string pin_of(X509 *cert) {
    int len = i2d_PUBKEY(X509_get0_pubkey(cert), nullptr);
    if (len <= 0) return {};
    std::vector<unsigned char> der(static_cast<std::size_t>(len));
    unsigned char *p = der.data();
    i2d_PUBKEY(X509_get0_pubkey(cert), &p);
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(der.data(), der.size(), digest);
    return "sha256//" + base64(digest, sizeof digest);
}

}  // namespace

Result<SharedSslCtx> make_client_context(const ClientTlsSettings &settings) {
    clear_openssl_errors();
    SharedSslCtx ctx = share(SSL_CTX_new(TLS_client_method()));
    if (!ctx) return fail(tls_error("TLS context"));
    SSL_CTX *c = ctx.get();
    SSL_CTX_set_min_proto_version(c, settings.min_version);
    SSL_CTX_set_verify(c, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_mode(c, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION);
    // Data connections resume the control connection's session (rftpd and
    // vsftpd require it), each with the same one. No cache: OpenSSL's
    // client cache marks a TLS 1.3 session used once as not resumable, and
    // the third of four parallel data connections would fall back to a full
    // handshake, which such servers refuse.
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
    if (!settings.ca_file.empty()) {
        if (SSL_CTX_load_verify_locations(c, settings.ca_file.c_str(), nullptr) != 1)
            return fail(tls_error("CA bundle " + settings.ca_file + " (--cacert)"));
    } else if (SSL_CTX_set_default_verify_paths(c) != 1) {
        return fail(tls_error("the system's CA store"));
    }
    return ctx;
}

Result<UniqueSsl> new_client_connection(SSL_CTX *ctx, const std::string &host, SSL_SESSION *session) {
    UniqueSsl ssl(SSL_new(ctx));
    if (!ssl) return fail(tls_error("TLS connection"));
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl.get());
    if (is_numeric_address(host)) {
        if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) return fail(tls_error("address " + host));
    } else {
        // SNI too, so a server with several names shows this one's certificate.
        if (SSL_set_tlsext_host_name(ssl.get(), host.c_str()) != 1 || SSL_set1_host(ssl.get(), host.c_str()) != 1)
            return fail(tls_error("host name " + host));
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    }
    offer_ftp_alpn(ssl.get());
    SSL_set_connect_state(ssl.get());
    if (session) SSL_set_session(ssl.get(), session);
    return ssl;
}

std::string handshake_failure(SSL *ssl, const std::string &host, const std::string &handshake_error) {
    long verdict = SSL_get_verify_result(ssl);
    if (verdict != X509_V_OK) {
        std::string why = X509_verify_cert_error_string(verdict);
        clear_openssl_errors();
        std::string advice = verdict == X509_V_ERR_HOSTNAME_MISMATCH || verdict == X509_V_ERR_IP_ADDRESS_MISMATCH
                                 ? "; connect by a name the certificate lists"
                                 : "; give the site's CA with --cacert or $RFTP_CA_BUNDLE";
        return "the server's certificate for " + host + " was not accepted: " + why + advice;
    }
    return "TLS with " + host + " failed: " + handshake_error;
}

Status check_pinned_key(SSL *ssl, const std::string &pinned_pubkey) {
    if (pinned_pubkey.empty()) return {};
    UniqueX509 cert(SSL_get1_peer_certificate(ssl));
    if (!cert) return fail_msg("the server showed no certificate to check the pinned key against");
    const std::string ours = pin_of(cert.get());
    std::size_t start = 0;
    while (start <= pinned_pubkey.size()) {
        std::size_t end = pinned_pubkey.find(';', start);
        if (end == std::string::npos) end = pinned_pubkey.size();
        if (pinned_pubkey.compare(start, end - start, ours) == 0) return {};
        start = end + 1;
    }
    return fail_msg("the server's public key " + ours + " is not the pinned one (--pinned-pubkey)");
}

}  // namespace rftp::middleware::tls
