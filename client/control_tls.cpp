#include "client/control_tls.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "client/session.h"
#include "common/socket_address.h"
#include "common/log.h"
#include "middleware/tls/client_context.h"

namespace rftp::client {

bool is_loopback_host(const std::string &host) { return host == "localhost" || is_loopback_address(host); }

Outcome<ControlTls> ControlTls::prepare(const Url &url, const Options &options) {
    ControlTls t;
    const bool loopback = is_loopback_host(url.host);
    t.mode_ = options.tls.value_or(loopback ? TlsMode::auto_select : TlsMode::require);
    if (url.implicit_tls()) {
        if (t.mode_ == TlsMode::off) return fail_as(ExitCode::usage, "ftps:// always uses TLS; use ftp:// for --tls off");
        t.mode_ = TlsMode::require;
    }
    t.host_ = url.host;
    t.loopback_ = loopback;
    t.pinned_pubkey_ = options.pinned_pubkey;
    if (t.mode_ == TlsMode::off) {
        if (!loopback)
            std::fprintf(stderr, "rftp: warning: --tls off: the password and all data cross the network to %s in "
                                 "clear text\n", url.host.c_str());
        return t;
    }
    t.ca_file_ = options.ca_file;
    return t;
}

// One context for the whole run, made when the first session starts TLS:
// loading the system's CA store takes milliseconds and hundreds of
// allocations, which a run of many sessions, or one whose server offers no
// TLS, should not pay for each session.
Outcome<middleware::tls::SharedSslCtx> ControlTls::shared_context() const {
    static std::mutex mutex;
    // Never destroyed: a static's destructor would free the contexts after
    // OpenSSL's own atexit cleanup, which OpenSSL 3 does not survive.
    static auto *made = new std::map<std::pair<std::string, std::string>, middleware::tls::SharedSslCtx>;
    std::lock_guard lock(mutex);
    auto &ctx = (*made)[{ca_file_, pinned_pubkey_}];
    if (!ctx) {
        auto fresh = middleware::tls::make_client_context({.ca_file = ca_file_, .pinned_pubkey = pinned_pubkey_});
        if (!fresh) return fail_as(ExitCode::usage, fresh.error().message);
        ctx = std::move(*fresh);
    }
    return ctx;
}

OutcomeStatus ControlTls::start(FtpConnection &control) {
    auto ctx = shared_context();
    if (!ctx) return std::unexpected(ctx.error());
    ctx_ = std::move(*ctx);
    if (auto ok = control.start_tls(ctx_.get(), host_, pinned_pubkey_); !ok) return ok;
    on_ = true;
    return {};
}

OutcomeStatus ControlTls::before_login(FtpConnection &control) {
    if (!asks_for_tls()) return {};
    auto reply = control.command("AUTH TLS");
    if (!reply) return std::unexpected(reply.error());
    if (reply->code == 234) return start(control);
    if (mode_ == TlsMode::require)
        return fail_as(ExitCode::connection, "the server does not offer TLS (AUTH TLS: " + describe(*reply) +
                                                 "); rftp sends no password in clear text to it: use --tls off to "
                                                 "allow that");
    if (loopback_)
        log::info("the server does not offer TLS (" + describe(*reply) + "); going on in clear text on loopback");
    else
        std::fprintf(stderr, "rftp: warning: %s does not offer TLS (%s); --tls auto goes on: the password and all "
                             "data cross the network in clear text\n", host_.c_str(), describe(*reply).c_str());
    return {};
}

Outcome<bool> ControlTls::protect_data(FtpConnection &control, bool ahead) {
    if (!on_) return false;
    if (ahead) {
        // Read on the way to the next reply: a refusal fails that read.
        if (auto sent = control.send_setting_ahead("PBSZ 0"); !sent) return std::unexpected(sent.error());
        if (auto sent = control.send_setting_ahead("PROT P"); !sent) return std::unexpected(sent.error());
        return true;
    }
    auto pbsz = control.command("PBSZ 0");
    if (!pbsz) return std::unexpected(pbsz.error());
    auto prot = pbsz->code == 200 ? control.command("PROT P") : pbsz;
    if (!prot) return std::unexpected(prot.error());
    if (prot->code == 200) return true;
    if (mode_ == TlsMode::require)
        return fail_as(ExitCode::connection, "the server refuses TLS on data connections (" + describe(*prot) +
                                                 "); files would cross in clear text: use --tls off to allow that");
    log::warning("the server refuses TLS on data connections (" + describe(*prot) + "); files go in clear text");
    return false;
}

}  // namespace rftp::client
