#include "daemon/data/data_channel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include <array>
#include <chrono>
#include <cstring>
#include <random>

#include "common/log.h"
#include "common/socket_address.h"
#include "protocol/data_token.h"

namespace rftp::daemon {
namespace {

void set_timeouts(int fd, unsigned timeout_s) {
    timeval tv{static_cast<time_t>(timeout_s), 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A passive data connection from the client's host that has not shown the
// session's data token yet (OPTS DATATOKEN).
struct Unproven {
    UniqueFd fd;
    sockaddr_storage peer{};
    std::array<uint8_t, wire::kDataTokenHeaderSize> got{};
    std::size_t have = 0;
};
// Connections waiting to show their token at once: a program that opens
// many and sends nothing holds no more descriptors than this. When full,
// the oldest goes: connections opened before the client's (they wait in
// the backlog until the transfer command) make room for it, and the
// client's own shows its token right after its connect, so a flood behind
// it would need this many accepts in that moment to push it out.
constexpr std::size_t kMaxUnproven = 64;

enum class Proof { incomplete, shown, wrong, closed };

// Reads what has arrived of u's token, never a byte past it: the data
// that follows belongs to the transfer.
Proof read_token(Unproven &u, const wire::Token &token) {
    ssize_t n = ::recv(u.fd.get(), u.got.data() + u.have, u.got.size() - u.have, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return Proof::incomplete;
    if (n <= 0) return Proof::closed;
    u.have += static_cast<std::size_t>(n);
    if (u.have < u.got.size()) return Proof::incomplete;
    const auto expected = wire::data_token_header(token);
    return CRYPTO_memcmp(expected.data(), u.got.data(), expected.size()) == 0 ? Proof::shown : Proof::wrong;
}

// Says why connections were refused: the first few each, the rest counted
// (one per transfer, when it stops waiting), so a flood floods no log.
class Refusals {
public:
    ~Refusals() {
        if (count_ > kEach)
            log::warning("event=data_connections_refused count=" + std::to_string(count_) +
                         " reason=\"as the ones above, and more not logged one by one\"");
    }
    void refuse(const sockaddr_storage &peer, const std::string &why) {
        if (++count_ <= kEach)
            log::warning("event=data_connection_refused from=" + address_text(peer) + " reason=" + log::quote(why));
    }

private:
    static constexpr unsigned kEach = 3;
    unsigned count_ = 0;
};

}  // namespace

bool same_host(const sockaddr_storage &a, const sockaddr_storage &b) { return address_text(a) == address_text(b); }

Result<std::unique_ptr<DataChannel>> DataChannel::listen_passive(const sockaddr_storage &local_addr,
                                                                 uint16_t port_min, uint16_t port_max,
                                                                 int backlog) {
    std::unique_ptr<DataChannel> ch(new DataChannel());
    sockaddr_storage addr = local_addr;
    ch->listener_.reset(::socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!ch->listener_) return fail_errno("data socket");
    int one = 1;
    ::setsockopt(ch->listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);

    bool bound = false;
    if (port_min == 0 && port_max == 0) {
        addr = with_port(addr, 0);
        bound = ::bind(ch->listener_.get(), reinterpret_cast<sockaddr *>(&addr), address_length(addr)) == 0;
    } else {
        // Start at a random port of the range so concurrent sessions rarely collide.
        uint32_t span = static_cast<uint32_t>(port_max - port_min) + 1;
        static thread_local std::minstd_rand rng(std::random_device{}());
        uint32_t first = rng() % span;
        for (uint32_t i = 0; i < span && !bound; ++i) {
            addr = with_port(addr, static_cast<uint16_t>(port_min + (first + i) % span));
            bound = ::bind(ch->listener_.get(), reinterpret_cast<sockaddr *>(&addr), address_length(addr)) == 0;
        }
    }
    if (!bound) return fail_errno("no free passive port");
    if (::listen(ch->listener_.get(), backlog) != 0) return fail_errno("listen on data port");
    socklen_t len = sizeof addr;
    ::getsockname(ch->listener_.get(), reinterpret_cast<sockaddr *>(&addr), &len);
    ch->port_ = ntohs(addr.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6 &>(addr).sin6_port
                                                 : reinterpret_cast<sockaddr_in &>(addr).sin_port);
    return ch;
}

std::unique_ptr<DataChannel> DataChannel::connect_active(const ftp::Endpoint &target) {
    std::unique_ptr<DataChannel> ch(new DataChannel());
    ch->active_target_ = std::make_unique<ftp::Endpoint>(target);
    return ch;
}

void DataChannel::cancel() {
    cancelled_.store(true);
    if (listener_) ::shutdown(listener_.get(), SHUT_RDWR);
}

std::unique_ptr<DataChannel> DataChannel::kept(std::vector<UniqueFd> connections) {
    std::unique_ptr<DataChannel> ch(new DataChannel());
    ch->kept_ = std::move(connections);
    return ch;
}

Result<std::vector<UniqueFd>> DataChannel::open(int n, const sockaddr_storage &control_peer,
                                                const std::optional<wire::Token> &token, unsigned timeout_s) {
    std::vector<UniqueFd> socks;
    if (!kept_.empty()) {
        if (static_cast<int>(kept_.size()) != n)
            return fail_msg(std::to_string(kept_.size()) + " data connections are kept, the transfer needs " +
                            std::to_string(n) + "; send EPSV first");
        return std::move(kept_);
    }
    if (active_target_) {
        addrinfo hints{}, *res = nullptr;
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
        hints.ai_socktype = SOCK_STREAM;
        std::string port = std::to_string(active_target_->port);
        if (getaddrinfo(active_target_->host.c_str(), port.c_str(), &hints, &res) != 0 || !res)
            return fail_msg("bad active-mode address");
        std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard(res, freeaddrinfo);
        for (int i = 0; i < n; ++i) {
            UniqueFd fd(::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
            if (!fd) return fail_errno("data socket");
            set_timeouts(fd.get(), timeout_s);
            if (::connect(fd.get(), res->ai_addr, res->ai_addrlen) != 0) return fail_errno("connect to client data port");
            socks.push_back(std::move(fd));
        }
        return socks;
    }

    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    std::vector<Unproven> unproven;
    Refusals refusals;
    while (static_cast<int>(socks.size()) < n) {
        if (cancelled_.load()) return fail(Error{-ECANCELED, "transfer aborted"});
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return fail(Error{-ETIMEDOUT, "client did not open its data connection(s) in time"});
        std::vector<pollfd> polled{{listener_.get(), POLLIN, 0}};
        for (const auto &u : unproven) polled.push_back({u.fd.get(), POLLIN, 0});
        int r = ::poll(polled.data(), polled.size(), static_cast<int>(std::min<long>(left.count(), 1000)));
        if (r < 0 && errno != EINTR) return fail_errno("poll data port");
        if (r <= 0) continue;
        // From the back, so the indices of those not yet looked at hold.
        for (std::size_t i = unproven.size(); i-- > 0 && static_cast<int>(socks.size()) < n;) {
            if (!(polled[i + 1].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            Proof proof = read_token(unproven[i], *token);
            if (proof == Proof::incomplete) continue;
            if (proof == Proof::shown) {
                set_timeouts(unproven[i].fd.get(), timeout_s);
                socks.push_back(std::move(unproven[i].fd));
            } else {
                refusals.refuse(unproven[i].peer, proof == Proof::wrong ? "wrong data token (not this session's client)"
                                                               : "closed before showing the data token");
            }
            unproven.erase(unproven.begin() + static_cast<std::ptrdiff_t>(i));
        }
        if (static_cast<int>(socks.size()) >= n || !(polled[0].revents & POLLIN)) continue;
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr *>(&peer), &len, SOCK_CLOEXEC));
        if (!fd) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
            if (cancelled_.load()) return fail(Error{-ECANCELED, "transfer aborted"});
            return fail_errno("accept data connection");
        }
        if (!same_host(peer, control_peer)) {
            // Someone else raced for the port (data-port theft): refuse, keep waiting.
            refusals.refuse(peer, "not the client's address " + address_text(control_peer));
            continue;
        }
        if (!token) {
            set_timeouts(fd.get(), timeout_s);
            socks.push_back(std::move(fd));
            continue;
        }
        if (unproven.size() >= kMaxUnproven) {
            refusals.refuse(unproven.front().peer, "too many connections without the data token");
            unproven.erase(unproven.begin());  // the oldest: unproven is in the order accepted
        }
        unproven.push_back(Unproven{std::move(fd), peer});
    }
    return socks;
}

}  // namespace rftp::daemon
