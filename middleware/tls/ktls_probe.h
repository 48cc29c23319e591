// Whether this kernel can carry TLS records itself (kTLS, CONFIG_TLS), the
// one way sendfile and splice could stay zero-copy under TLS. rftp does not
// use kTLS yet: data connections go through a relay (tls_relay.h); the
// daemon and the benchmarks say which of the two this machine could have.
#pragma once

namespace rftp::middleware::tls {

bool kernel_has_ktls();

}  // namespace rftp::middleware::tls
