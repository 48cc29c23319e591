// Ties a data connection's TLS to the control connection's TLS session.
//
// A data connection under PROT P must resume the TLS session of the control
// connection that logged in: only the holder of that session's secrets can
// resume it, so the data connection provably comes from the authenticated
// client (vsftpd's require_ssl_reuse). Comparing session objects, as vsftpd
// does, breaks with TLS 1.3, where every ticket is a new session. Instead
// each control connection gets a random tag; the server writes it into every
// ticket and cached session it issues on that connection, and a data
// connection is served only when its resumed session carries the same tag.
// Tickets are encrypted with the server's key, so a client cannot forge one.
#pragma once

#include <openssl/ssl.h>

#include <array>
#include <optional>

namespace rftp::middleware::tls {

using BindingTag = std::array<unsigned char, 16>;

BindingTag new_binding_tag();

// Makes ctx write each connection's tag into the tickets it issues.
void install_session_binding(SSL_CTX *ctx);

// Before a control connection's handshake: the tag its tickets carry.
// Never on a data connection: a ticket it issued would carry the tag it is
// being checked for.
void set_binding_tag(SSL *ssl, const BindingTag &tag);

// After a control connection's handshake: the tag on the session itself,
// for clients that resume by session ID (TLS 1.2 without tickets). A
// control connection that itself resumed a session keeps the tag that
// session carries (under TLS 1.2 by ID it is the cached session, shared
// with the connection that made it), and returns it: its data connections
// may carry either.
std::optional<BindingTag> tag_established_session(SSL *ssl);

// After a data connection's handshake: whether it resumed a session that
// carries tag.
bool resumed_with_tag(SSL *ssl, const BindingTag &tag);

}  // namespace rftp::middleware::tls
