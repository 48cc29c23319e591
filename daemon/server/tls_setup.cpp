#include "daemon/server/tls_setup.h"

#include "middleware/tls/server_context.h"

namespace rftp::daemon {

Result<middleware::tls::SharedSslCtx> load_tls_context(const TlsOptions &options) {
    if (!options.enabled()) return middleware::tls::SharedSslCtx{};
    middleware::tls::ServerTlsSettings settings{
        .certificate = options.certificate,
        .key = options.key,
        .min_version = options.min_version == "1.3" ? TLS1_3_VERSION : TLS1_2_VERSION,
    };
    auto ctx = middleware::tls::make_server_context(settings);
    if (!ctx) return fail(ctx.error().with_context("tls"));
    return ctx;
}

}  // namespace rftp::daemon
