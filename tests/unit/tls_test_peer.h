// TLS for unit tests: a CA-less, self-signed certificate made in memory and
// written as PEM files, and a client and a server connection joined by a
// socket pair, each handshaking on its own thread.
#pragma once

#include <openssl/ec.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "middleware/tls/client_context.h"
#include "middleware/tls/handshake.h"
#include "middleware/tls/openssl_handles.h"
#include "middleware/tls/server_context.h"

namespace rftp::middleware::tls::testing {

struct PemFiles {
    std::string certificate, key;
};

// A certificate for "localhost" valid from now + from_days to now + to_days.
inline PemFiles make_certificate(const std::filesystem::path &dir, const std::string &name, long from_days = -1,
                                 long to_days = 2) {
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), from_days * 86400);
    X509_gmtime_adj(X509_getm_notAfter(cert), to_days * 86400);
    X509_set_pubkey(cert, key);
    X509_NAME *subject = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char *>("localhost"), -1,
                               -1, 0);
    X509_set_issuer_name(cert, subject);
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, cert, cert, nullptr, nullptr, 0);
    X509_EXTENSION *san = X509V3_EXT_conf_nid(nullptr, &v3, NID_subject_alt_name, "DNS:localhost");
    X509_add_ext(cert, san, -1);
    X509_EXTENSION_free(san);
    X509_sign(cert, key, EVP_sha256());
    PemFiles files{(dir / (name + ".pem")).string(), (dir / (name + ".key")).string()};
    std::FILE *c = std::fopen(files.certificate.c_str(), "w");
    PEM_write_X509(c, cert);
    std::fclose(c);
    std::FILE *k = std::fopen(files.key.c_str(), "w");
    PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(k);
    X509_free(cert);
    EVP_PKEY_free(key);
    return files;
}

inline std::pair<UniqueFd, UniqueFd> socket_pair() {
    int fds[2];
    ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

struct Handshaken {
    UniqueSsl client, server;
    Status client_result, server_result;
};

// Runs both handshakes at once over fds (client's end, server's end).
inline Handshaken handshake_pair(UniqueSsl client, int client_fd, UniqueSsl server, int server_fd) {
    Handshaken h;
    std::thread s([&] { h.server_result = handshake(server.get(), server_fd, 5000); });
    h.client_result = handshake(client.get(), client_fd, 5000);
    s.join();
    h.client = std::move(client);
    h.server = std::move(server);
    return h;
}

}  // namespace rftp::middleware::tls::testing
