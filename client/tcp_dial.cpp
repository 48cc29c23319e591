#include "client/tcp_dial.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "client/interrupt.h"

namespace rftp::client {
namespace {

std::string numeric_host(const sockaddr *sa, socklen_t len) {
    char buf[NI_MAXHOST] = {};
    if (getnameinfo(sa, len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
    return buf;
}

// Waits for a non-blocking connect; 0 or an errno value.
int finish_connect(int fd, int timeout_seconds) {
    pollfd p{fd, POLLOUT, 0};
    int waited_ms = 0;
    for (;;) {
        int r = ::poll(&p, 1, 200);
        if (r < 0 && errno != EINTR) return errno;
        if (interrupted()) return EINTR;
        if (r > 0) break;
        waited_ms += 200;
        if (waited_ms >= timeout_seconds * 1000) return ETIMEDOUT;
    }
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return errno;
    return err;
}

}  // namespace

void set_io_timeouts(int fd, int timeout_seconds) {
    timeval tv{timeout_seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

Outcome<Dialed> tcp_dial(const std::string &host, uint16_t port, int timeout_seconds) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    // A numeric host (every data connection: the control connection's
    // peer) needs no lookup, and AI_ADDRCONFIG would ask the kernel for
    // this host's addresses over netlink each time.
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo *list = nullptr;
    std::string service = std::to_string(port);
    int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
    if (rc == EAI_NONAME) {
        hints.ai_flags = AI_ADDRCONFIG;
        rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
    }
    if (rc != 0) {
        // AI_ADDRCONFIG hides ::1 on hosts without a global IPv6 address; retry without it.
        hints.ai_flags = 0;
        rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
    }
    if (rc != 0) return fail_as(ExitCode::connection, "resolve " + host + ": " + gai_strerror(rc));
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(list, &freeaddrinfo);

    std::string last_error = "no address";
    for (addrinfo *ai = list; ai; ai = ai->ai_next) {
        UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        std::string peer = numeric_host(ai->ai_addr, ai->ai_addrlen);
        if (!fd) {
            last_error = std::string("socket: ") + std::strerror(errno);
            continue;
        }
        int err = 0;
        if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0)
            err = errno == EINPROGRESS ? finish_connect(fd.get(), timeout_seconds) : errno;
        if (err == EINTR && interrupted()) return fail_as(ExitCode::interrupted, "interrupted while connecting");
        if (err != 0) {
            last_error = peer + " port " + service + ": " + std::strerror(err);
            continue;
        }
        int flags = ::fcntl(fd.get(), F_GETFL);
        ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
        int one = 1;
        ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        set_io_timeouts(fd.get(), timeout_seconds);
        return Dialed{std::move(fd), peer};
    }
    return fail_as(ExitCode::connection, "connect to " + host + ": " + last_error);
}

}  // namespace rftp::client
