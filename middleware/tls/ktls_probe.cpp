#include "middleware/tls/ktls_probe.h"

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

}  // namespace rftp::middleware::tls
