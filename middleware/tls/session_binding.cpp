#include "middleware/tls/session_binding.h"

#include <openssl/rand.h>

#include <cstring>

namespace rftp::middleware::tls {
namespace {

void free_tag(void *, void *ptr, CRYPTO_EX_DATA *, int, long, void *) { delete static_cast<BindingTag *>(ptr); }

int tag_index() {
    static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, &free_tag);
    return index;
}

const BindingTag *tag_of(SSL *ssl) { return static_cast<const BindingTag *>(SSL_get_ex_data(ssl, tag_index())); }

void put_tag(SSL_SESSION *session, const BindingTag &tag) {
    if (session) SSL_SESSION_set1_ticket_appdata(session, tag.data(), tag.size());
}

int on_ticket_made(SSL *ssl, void *) {
    if (const BindingTag *tag = tag_of(ssl)) put_tag(SSL_get0_session(ssl), *tag);
    return 1;
}

// OpenSSL's own decisions, unchanged: the tag is checked after the handshake.
SSL_TICKET_RETURN on_ticket_opened(SSL *, SSL_SESSION *, const unsigned char *, size_t, SSL_TICKET_STATUS status,
                                   void *) {
    switch (status) {
        case SSL_TICKET_SUCCESS: return SSL_TICKET_RETURN_USE;
        case SSL_TICKET_SUCCESS_RENEW: return SSL_TICKET_RETURN_USE_RENEW;
        case SSL_TICKET_EMPTY:
        case SSL_TICKET_NO_DECRYPT: return SSL_TICKET_RETURN_IGNORE_RENEW;
        default: return SSL_TICKET_RETURN_IGNORE;
    }
}

}  // namespace

BindingTag new_binding_tag() {
    BindingTag tag{};
    if (RAND_bytes(tag.data(), static_cast<int>(tag.size())) != 1) std::abort();  // no randomness: nothing is safe
    return tag;
}

void install_session_binding(SSL_CTX *ctx) { SSL_CTX_set_session_ticket_cb(ctx, &on_ticket_made, &on_ticket_opened, nullptr); }

void set_binding_tag(SSL *ssl, const BindingTag &tag) { SSL_set_ex_data(ssl, tag_index(), new BindingTag(tag)); }

namespace {

std::optional<BindingTag> tag_on(SSL_SESSION *session) {
    void *data = nullptr;
    size_t len = 0;
    if (!session || SSL_SESSION_get0_ticket_appdata(session, &data, &len) != 1 || len != BindingTag{}.size())
        return std::nullopt;
    BindingTag tag;
    std::memcpy(tag.data(), data, len);
    return tag;
}

}  // namespace

std::optional<BindingTag> tag_established_session(SSL *ssl) {
    if (SSL_session_reused(ssl) == 1)
        if (auto inherited = tag_on(SSL_get0_session(ssl))) return inherited;
    if (const BindingTag *tag = tag_of(ssl)) put_tag(SSL_get0_session(ssl), *tag);
    return std::nullopt;
}

bool resumed_with_tag(SSL *ssl, const BindingTag &tag) {
    if (SSL_session_reused(ssl) != 1) return false;
    auto carried = tag_on(SSL_get0_session(ssl));
    return carried && CRYPTO_memcmp(carried->data(), tag.data(), tag.size()) == 0;
}

}  // namespace rftp::middleware::tls
