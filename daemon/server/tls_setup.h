// The daemon's TLS context from the config's tls section: made at start
// (and by --check-config, so a bad certificate is found before a restart)
// and again on SIGHUP, when a renewed certificate replaces the old one for
// new sessions while running sessions keep theirs.
#pragma once

#include "common/result.h"
#include "daemon/config/options.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::daemon {

// Empty (no TLS) when tls.certificate is not set.
Result<middleware::tls::SharedSslCtx> load_tls_context(const TlsOptions &options);

}  // namespace rftp::daemon
