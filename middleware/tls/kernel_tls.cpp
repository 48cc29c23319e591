#include "middleware/tls/kernel_tls.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace rftp::middleware::tls {

bool kernel_has_ktls() {
    // The "tls" upper layer protocol exists when the kernel has it: on an
    // unconnected socket it refuses with ENOTCONN; without it, ENOENT.
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    int r = ::setsockopt(fd, IPPROTO_TCP, TCP_ULP, "tls", sizeof "tls");
    int err = errno;
    ::close(fd);
    return r == 0 || err == ENOTCONN;
}

void offer_kernel_tls(SSL *ssl) {
    // Without the module OpenSSL's setsockopt fails and it keeps the
    // records itself: nothing to check first.
    SSL_set_options(ssl, SSL_OP_ENABLE_KTLS);
}

std::string KernelTls::name() const {
    if (send && receive) return "ktls";
    if (send) return "ktls_send";
    if (receive) return "ktls_receive";
    return "relay";
}

KernelTls kernel_tls_in_use(SSL *ssl) {
    KernelTls k;
    BIO *w = SSL_get_wbio(ssl), *r = SSL_get_rbio(ssl);
    k.send = w && BIO_get_ktls_send(w);
    k.receive = r && BIO_get_ktls_recv(r);
    return k;
}

}  // namespace rftp::middleware::tls
