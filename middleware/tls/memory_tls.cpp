#include "middleware/tls/memory_tls.h"

#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {

Result<MemoryTls> MemoryTls::accept(SSL_CTX *ctx) {
    clear_openssl_errors();
    MemoryTls t;
    t.ssl_.reset(SSL_new(ctx));
    if (!t.ssl_) return fail(tls_error("TLS connection"));
    t.from_network_ = BIO_new(BIO_s_mem());
    t.to_network_ = BIO_new(BIO_s_mem());
    if (!t.from_network_ || !t.to_network_) {
        BIO_free(t.from_network_);
        BIO_free(t.to_network_);
        return fail(tls_error("TLS buffers"));
    }
    // An empty input buffer means "wait for more", not end of stream.
    BIO_set_mem_eof_return(t.from_network_, -1);
    SSL_set_bio(t.ssl_.get(), t.from_network_, t.to_network_);
    SSL_set_accept_state(t.ssl_.get());
    return t;
}

Status MemoryTls::take_in(std::string_view from_network, std::string &plain) {
    clear_openssl_errors();
    if (!from_network.empty() &&
        BIO_write(from_network_, from_network.data(), static_cast<int>(from_network.size())) <= 0)
        return fail(tls_error("TLS input"));
    char buf[16384];
    while (!peer_closed_) {
        int n = SSL_read(ssl_.get(), buf, sizeof buf);
        if (n > 0) {
            plain.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        int err = SSL_get_error(ssl_.get(), n);
        if (err == SSL_ERROR_WANT_READ) return flush_pending();
        if (err == SSL_ERROR_ZERO_RETURN) {
            peer_closed_ = true;
            return {};
        }
        return fail(tls_error(handshake_done() ? "TLS record" : "TLS handshake"));
    }
    return {};
}

Status MemoryTls::flush_pending() {
    if (pending_.empty() || !handshake_done()) return {};
    std::string text = std::move(pending_);
    pending_.clear();
    return put_out(text);
}

Status MemoryTls::put_out(std::string_view plain) {
    if (!handshake_done()) {
        pending_.append(plain);
        return {};
    }
    clear_openssl_errors();
    while (!plain.empty()) {
        int n = SSL_write(ssl_.get(), plain.data(), static_cast<int>(plain.size()));
        if (n <= 0) return fail(tls_error("TLS output"));
        plain.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

void MemoryTls::close_notify() {
    if (handshake_done()) SSL_shutdown(ssl_.get());
    clear_openssl_errors();
}

std::string MemoryTls::drain() {
    std::string out;
    char *data = nullptr;
    long len = BIO_get_mem_data(to_network_, &data);
    if (len > 0) out.assign(data, static_cast<std::size_t>(len));
    (void)BIO_reset(to_network_);
    return out;
}

}  // namespace rftp::middleware::tls
