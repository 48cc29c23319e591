// How a session's control connection gets its TLS (--tls, ftps://), and
// whether its data connections get PROT P. rftp never sends a password in
// clear text to a host that is not loopback unless told --tls off, and then
// it says so on stderr.
#pragma once

#include <string>

#include "client/cli/options.h"
#include "client/exit_codes.h"
#include "client/ftp_connection.h"
#include "client/url.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::client {

class ControlTls {
public:
    // The mode for url's host. The TLS context (CA store, pinned key) is
    // made when TLS starts; a CA bundle that cannot be read is an error then.
    static Outcome<ControlTls> prepare(const Url &url, const Options &options);

    // The handshake on control (ftps:// at once; else after AUTH TLS).
    OutcomeStatus start(FtpConnection &control);
    // Whether before_login sends AUTH TLS: not when off or already under TLS.
    bool asks_for_tls() const { return !on_ && mode_ != TlsMode::off; }
    // After the greeting: AUTH TLS where asks_for_tls(), or its reply only
    // where it went ahead. A server without TLS is an error under require.
    OutcomeStatus before_login(FtpConnection &control);
    // After the login: PBSZ 0 and PROT P when the control connection is
    // TLS; whether data connections are protected. ahead: to a server that
    // pipelines and lists AUTH TLS, both go as settings ahead
    // (FtpConnection::send_setting_ahead), read with the next reply.
    Outcome<bool> protect_data(FtpConnection &control, bool ahead);

    // Empty until TLS started.
    const middleware::tls::SharedSslCtx &context() const { return ctx_; }

private:
    Outcome<middleware::tls::SharedSslCtx> shared_context() const;

    TlsMode mode_ = TlsMode::require;
    std::string host_;
    bool loopback_ = false;
    std::string pinned_pubkey_;
    std::string ca_file_;
    middleware::tls::SharedSslCtx ctx_;
    bool on_ = false;
};

// localhost, 127.0.0.0/8, ::1: where clear text never leaves the machine.
bool is_loopback_host(const std::string &host);

}  // namespace rftp::client
