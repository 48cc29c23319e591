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
#include <optional>
#include <vector>

#include "client/interrupt.h"

namespace rftp::client {
namespace {

std::string numeric_host(const sockaddr *sa, socklen_t len) {
    char buf[NI_MAXHOST] = {};
    if (getnameinfo(sa, len, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
    return buf;
}

}  // namespace

void set_io_timeouts(int fd, int timeout_seconds) {
    timeval tv{timeout_seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

namespace {

using AddressList = std::unique_ptr<addrinfo, decltype(&freeaddrinfo)>;

Outcome<AddressList> resolve(const std::string &host, const std::string &service) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    // A numeric host (every data connection: the control connection's
    // peer) needs no lookup, and AI_ADDRCONFIG would ask the kernel for
    // this host's addresses over netlink each time.
    hints.ai_flags = AI_NUMERICHOST;
    addrinfo *list = nullptr;
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
    return AddressList(list, &freeaddrinfo);
}

// A connected socket as every caller uses it: blocking, Nagle off, and
// --timeout on each read and write.
void ready_for_use(int fd, int timeout_seconds) {
    int flags = ::fcntl(fd, F_GETFL);
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    set_io_timeouts(fd, timeout_seconds);
}

// Which connect failed (its position among those waited for), and why
// (an errno value).
struct DialFailure {
    std::size_t index = 0;
    int error = 0;
};

// Waits for non-blocking connects until each handshake ended, a poll over
// them all in 200 ms slices, so an interrupt is seen: nothing when all
// succeeded, else the first failure seen.
std::optional<DialFailure> finish_connects(const std::vector<int> &fds, int timeout_seconds) {
    std::vector<std::size_t> pending(fds.size());
    for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;
    int waited_ms = 0;
    while (!pending.empty()) {
        std::vector<pollfd> polls;
        for (std::size_t i : pending) polls.push_back({fds[i], POLLOUT, 0});
        int r = ::poll(polls.data(), polls.size(), 200);
        if (r < 0 && errno != EINTR) return DialFailure{pending.front(), errno};
        if (interrupted()) return DialFailure{pending.front(), EINTR};
        if (r <= 0) {
            waited_ms += 200;
            if (waited_ms >= timeout_seconds * 1000) return DialFailure{pending.front(), ETIMEDOUT};
            continue;
        }
        std::vector<std::size_t> still;
        for (std::size_t k = 0; k < polls.size(); ++k) {
            if (polls[k].revents == 0) {
                still.push_back(pending[k]);
                continue;
            }
            int err = 0;
            socklen_t len = sizeof err;
            if (::getsockopt(polls[k].fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
            if (err != 0) return DialFailure{pending[k], err};
        }
        pending = std::move(still);
    }
    return std::nullopt;
}

}  // namespace

Outcome<Dialed> tcp_dial(const std::string &host, uint16_t port, int timeout_seconds) {
    const std::string service = std::to_string(port);
    auto list = resolve(host, service);
    if (!list) return std::unexpected(list.error());
    std::string last_error = "no address";
    for (addrinfo *ai = list->get(); ai; ai = ai->ai_next) {
        UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        std::string peer = numeric_host(ai->ai_addr, ai->ai_addrlen);
        if (!fd) {
            last_error = std::string("socket: ") + std::strerror(errno);
            continue;
        }
        int err = 0;
        if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) < 0) {
            err = errno;
            if (err == EINPROGRESS) {
                auto failure = finish_connects({fd.get()}, timeout_seconds);
                err = failure ? failure->error : 0;
            }
        }
        if (err == EINTR && interrupted()) return fail_as(ExitCode::interrupted, "interrupted while connecting");
        if (err != 0) {
            last_error = peer + " port " + service + ": " + std::strerror(err);
            continue;
        }
        ready_for_use(fd.get(), timeout_seconds);
        return Dialed{std::move(fd), peer};
    }
    return fail_as(ExitCode::connection, "connect to " + host + ": " + last_error);
}

Outcome<std::vector<UniqueFd>> tcp_dial_together(const std::string &host, uint16_t port, unsigned count,
                                                 int timeout_seconds) {
    const std::string service = std::to_string(port);
    auto list = resolve(host, service);
    if (!list) return std::unexpected(list.error());
    const addrinfo *ai = list->get();
    const std::string peer = numeric_host(ai->ai_addr, ai->ai_addrlen);
    auto failed = [&](std::size_t index, int err) -> Outcome<std::vector<UniqueFd>> {
        if (err == EINTR && interrupted()) return fail_as(ExitCode::interrupted, "interrupted while connecting");
        return fail_as(ExitCode::connection, "data connection " + std::to_string(index + 1) + "/" +
                                                 std::to_string(count) + ": " + peer + " port " + service + ": " +
                                                 std::strerror(err));
    };
    std::vector<UniqueFd> socks;
    std::vector<std::size_t> pending;  // indexes in socks of connects under way
    socks.reserve(count);
    for (unsigned i = 0; i < count; ++i) {
        UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
        if (!fd) return failed(i, errno);
        const int connected = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
        const int err = errno;
        socks.push_back(std::move(fd));
        if (connected == 0) continue;
        if (err != EINPROGRESS) return failed(i, err);
        pending.push_back(i);
    }
    std::vector<int> waiting;
    for (std::size_t i : pending) waiting.push_back(socks[i].get());
    if (auto failure = finish_connects(waiting, timeout_seconds)) return failed(pending[failure->index], failure->error);
    for (auto &fd : socks) ready_for_use(fd.get(), timeout_seconds);
    return socks;
}

}  // namespace rftp::client
