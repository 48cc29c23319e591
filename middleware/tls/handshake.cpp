#include "middleware/tls/handshake.h"

#include <fcntl.h>
#include <poll.h>

#include <cerrno>
#include <chrono>

#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {
namespace {

// Short slices, so a cancel is seen soon.
constexpr int kSliceMs = 200;

class NonBlocking {
public:
    explicit NonBlocking(int fd) : fd_(fd), flags_(::fcntl(fd, F_GETFL)) {
        if (flags_ >= 0) ::fcntl(fd, F_SETFL, flags_ | O_NONBLOCK);
    }
    ~NonBlocking() {
        if (flags_ >= 0) ::fcntl(fd_, F_SETFL, flags_);
    }
    NonBlocking(const NonBlocking &) = delete;
    NonBlocking &operator=(const NonBlocking &) = delete;

private:
    int fd_, flags_;
};

}  // namespace

Status handshake(SSL *ssl, int fd, int timeout_ms, const std::atomic<bool> *cancelled) {
    clear_openssl_errors();
    if (SSL_set_fd(ssl, fd) != 1) return fail(tls_error("TLS on socket"));
    NonBlocking nonblocking(fd);
    // A deadline, not a count of idle slices: a peer trickling a byte now
    // and then must not hold the thread past it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
        errno = 0;
        int r = SSL_do_handshake(ssl);
        if (r == 1) return {};
        int err = SSL_get_error(ssl, r);
        short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (events == 0) {
            if (err == SSL_ERROR_SYSCALL && errno != 0) return fail(Error::from_errno("TLS handshake"));
            if (err == SSL_ERROR_SYSCALL || err == SSL_ERROR_ZERO_RETURN)
                return fail_msg("TLS handshake: the peer closed the connection", -ECONNRESET);
            return fail(tls_error("TLS handshake"));
        }
        for (;;) {
            if (cancelled && cancelled->load()) return fail_msg("TLS handshake: cancelled", -ECANCELED);
            if (std::chrono::steady_clock::now() >= deadline)
                return fail_msg("TLS handshake: not done in time", -ETIMEDOUT);
            pollfd p{fd, events, 0};
            int n = ::poll(&p, 1, kSliceMs);
            if (n < 0 && errno != EINTR) return fail(Error::from_errno("TLS handshake: poll"));
            if (n > 0) break;
        }
    }
}

}  // namespace rftp::middleware::tls
