#include "middleware/rdma/cm_setup.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <poll.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "common/socket_address.h"
#include "common/unique_fd.h"
#include "middleware/rdma/connect_fault.h"

namespace rftp::middleware::rdma {
namespace {

using Clock = std::chrono::steady_clock;

Result<EventChannel> new_event_channel() {
    EventChannel ch(rdma_create_event_channel());
    if (!ch) {
        int err = errno;
        if (err == ENODEV || err == ENOENT)
            return fail_errno("rdma_cm is not available (no /dev/infiniband/rdma_cm: load rdma_ucm or add an RDMA device)", err);
        return fail_errno("rdma_create_event_channel", err);
    }
    int flags = ::fcntl(ch->fd, F_GETFL);
    if (flags < 0 || ::fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) return fail_errno("make rdma_cm events non-blocking");
    return ch;
}

// Waits for the next event, polling in short slices so cancelled is seen.
// Deadline and cancellation come first: a stream of connection requests
// (anyone can send them) must not keep a setup alive past either.
Result<CmEvent> next_event(rdma_event_channel *ch, Clock::time_point deadline, const std::atomic<bool> *cancelled) {
    for (;;) {
        if (cancelled && cancelled->load()) return fail_msg("cancelled", -ECANCELED);
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return fail_msg("timed out", -ETIMEDOUT);
        rdma_cm_event *ev = nullptr;
        if (rdma_get_cm_event(ch, &ev) == 0) return CmEvent(ev);
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return fail_errno("rdma_get_cm_event");
        pollfd pfd{ch->fd, POLLIN, 0};
        ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 200)));
    }
}

// Waits for `want` on id; any other event for it is a failure.
Status expect_event(rdma_event_channel *ch, rdma_cm_id *id, rdma_cm_event_type want, Clock::time_point deadline,
                    const char *step) {
    auto ev = next_event(ch, deadline, nullptr);
    if (!ev) return fail(ev.error().with_context(step));
    if ((*ev)->id != id) return fail_msg(std::string(step) + ": event for another connection");
    if ((*ev)->event != want) {
        std::string what = rdma_event_str((*ev)->event);
        if ((*ev)->event == RDMA_CM_EVENT_REJECTED)
            return fail_msg(std::string(step) + ": the server rejected the connection (wrong or expired token?)",
                            -ECONNREFUSED);
        return fail_msg(std::string(step) + ": " + what + (((*ev)->status) ? " (status " + std::to_string((*ev)->status) + ")" : ""),
                        (*ev)->status < 0 ? (*ev)->status : -EPROTO);
    }
    return {};
}

rdma_conn_param conn_param(const void *data, uint8_t len) {
    rdma_conn_param p{};
    p.private_data = data;
    p.private_data_len = len;
    p.responder_resources = 1;
    p.initiator_depth = 1;
    p.retry_count = 7;
    p.rnr_retry_count = 7;  // a receive is always posted in time; this only covers a slow repost
    return p;
}

}  // namespace

std::string address_string(const sockaddr_storage &addr) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET)
        ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(addr).sin_addr, buf, sizeof buf);
    else if (addr.ss_family == AF_INET6)
        ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(addr).sin6_addr, buf, sizeof buf);
    return buf;
}

Result<std::unique_ptr<ChannelListener>> ChannelListener::listen(const sockaddr_storage &local, uint16_t port_min,
                                                                 uint16_t port_max) {
    std::unique_ptr<ChannelListener> l(new ChannelListener());
    auto ch = new_event_channel();
    if (!ch) return fail(ch.error());
    l->events_ = std::move(*ch);
    // 0 or the errno of the step that failed. iWARP listens on a real TCP
    // port that the RDMA CM's own port allocation does not know about, so
    // rdma_listen can find a port taken (EADDRINUSE) that the bind accepted:
    // such a port is skipped like one the bind refused.
    auto try_port = [&](uint16_t port, std::string &step) -> int {
        rdma_cm_id *raw = nullptr;
        step = "rdma_create_id";
        if (rdma_create_id(l->events_.get(), &raw, nullptr, RDMA_PS_TCP) != 0) return errno;
        CmConnection id(raw);
        sockaddr_storage a = with_port(local, port);
        step = "rdma_bind_addr " + address_string(local);
        if (rdma_bind_addr(raw, reinterpret_cast<sockaddr *>(&a)) != 0) return errno;
        if (!raw->verbs) return ENODEV;
        step = "rdma_listen";
        if (rdma_listen(raw, 8) != 0) return errno;
        l->listen_id_ = std::move(id);
        return 0;
    };
    // No range configured: the CM picks a port; a few tries past taken ones.
    constexpr uint32_t kAnyPortTries = 8;
    const bool any = port_min == 0 && port_max == 0;
    const uint32_t first = any ? 0 : port_min, tries = any ? kAnyPortTries : uint32_t{port_max} - port_min + 1;
    int err = EADDRINUSE;
    std::string step;
    for (uint32_t i = 0; i < tries && err == EADDRINUSE; ++i)
        err = try_port(static_cast<uint16_t>(any ? 0 : first + i), step);
    if (err == ENODEV || (step.starts_with("rdma_bind_addr") && (err == EADDRNOTAVAIL || err == EINVAL)))
        return fail_msg("no RDMA device serves " + address_string(local), -ENODEV);
    if (err == EADDRINUSE) return fail_msg("no free RDMA port in the configured range", -EADDRINUSE);
    if (err) return fail_errno(step, err);
    l->port_ = ntohs(rdma_get_src_port(l->listen_id_.get()));
    return l;
}

ChannelListener::~ChannelListener() = default;

Status ChannelListener::accept(ChannelResources &res, const wire::ChannelTokens &tokens, unsigned timeout_s,
                               const std::atomic<bool> &cancelled,
                               const std::function<void(const std::string &)> &on_rejected) {
    if (tokens.per_index.size() != 1 && tokens.per_index.size() != res.params.queue_pairs())
        return fail_msg("RDMA channel: " + std::to_string(tokens.per_index.size()) + " tokens for " +
                        std::to_string(res.params.queue_pairs()) + " queue pairs");
    const unsigned want = res.params.queue_pairs();
    auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
    // On failure, the accepted connections go while their event channel
    // (still the listener's) is alive.
    struct DropOnFailure {
        ChannelResources &res;
        bool ok = false;
        ~DropOnFailure() {
            if (!ok) for (auto &c : res.connections) c.reset();
        }
    } guard{res};
    std::vector<bool> accepted(want, false);
    unsigned established = 0;
    // The first few rejections are worth a log line each; a flood is not.
    constexpr unsigned kRejectionsLogged = 8;
    unsigned rejections = 0;
    while (established < want) {
        auto ev = next_event(events_.get(), deadline, &cancelled);
        if (!ev) {
            if (ev.error().code == -ETIMEDOUT)
                return fail_msg("the client connected " + std::to_string(established) + " of " + std::to_string(want) +
                                    " queue pairs within " + std::to_string(timeout_s) + " s",
                                -ETIMEDOUT);
            return fail(ev.error());
        }
        rdma_cm_event &e = **ev;
        if (e.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            rdma_cm_id *id = e.id;
            auto reject = [&](const std::string &why) {
                rdma_reject(id, nullptr, 0);
                if (++rejections <= kRejectionsLogged)
                    on_rejected(why + " from " +
                                address_string(*reinterpret_cast<sockaddr_storage *>(rdma_get_peer_addr(id))) +
                                (rejections == kRejectionsLogged ? " (further rejections of this setup not logged)" : ""));
                ev->reset();           // ack before destroying the id
                rdma_destroy_id(id);
            };
            auto data = wire::decode_connect({static_cast<const uint8_t *>(e.param.conn.private_data),
                                              e.param.conn.private_data_len});
            if (!data) { reject(data.error().message); continue; }
            // The index first: under TLS it chooses the token to compare with.
            if (data->count != want || accepted[data->index]) { reject("unexpected queue pair index"); continue; }
            const wire::ChannelToken &token = tokens.for_index(data->index);
            if (CRYPTO_memcmp(data->token.data(), token.data(), token.size()) != 0) { reject("wrong token"); continue; }
            // All queue pairs share one protection domain, so one device; a
            // request that arrived through another is turned away, not fatal.
            if (res.device() && res.device() != id->verbs) { reject("queue pair on another RDMA device"); continue; }
            if (!res.device()) {
                if (auto ok = res.attach_device(id->verbs); !ok) {
                    reject("no resources");
                    return ok;
                }
            }
            CmConnection conn(id);
            unsigned index = data->index;
            if (auto ok = res.add_connection(index, conn); !ok) {
                conn.release();  // still ours: reject() acks the event, then destroys the id
                reject("queue pair setup failed");
                return ok;
            }
            auto p = conn_param(nullptr, 0);
            if (rdma_accept(id, &p) != 0) return fail_errno("rdma_accept");
            accepted[index] = true;
        } else if (e.event == RDMA_CM_EVENT_ESTABLISHED) {
            ++established;
        } else if (e.event == RDMA_CM_EVENT_DISCONNECTED || e.event == RDMA_CM_EVENT_REJECTED ||
                   e.event == RDMA_CM_EVENT_CONNECT_ERROR || e.event == RDMA_CM_EVENT_UNREACHABLE) {
            return fail_msg(std::string("a queue pair of the channel failed to connect: ") + rdma_event_str(e.event),
                            -ECONNABORTED);
        }
    }
    listen_id_.reset();  // nobody else gets in
    res.events = std::move(events_);
    guard.ok = true;
    return {};
}

namespace {

// The local address the kernel's routing would send to dst from (a
// connected UDP socket sends nothing): a bound source port needs a real
// address beside it, as the CM cannot pick a device for a wildcard.
Result<sockaddr_storage> route_source(const sockaddr_storage &dst) {
    UniqueFd probe(::socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!probe) return fail_errno("socket");
    sockaddr_storage to = with_port(dst, 9);  // any port: connect only routes
    if (::connect(probe.get(), reinterpret_cast<sockaddr *>(&to), address_length(to)) != 0)
        return fail_errno("route to " + address_string(dst));
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    if (::getsockname(probe.get(), reinterpret_cast<sockaddr *>(&from), &len) != 0) return fail_errno("getsockname");
    return from;
}

// Connects queue pair i of want, from a new id (and so a new local port:
// local_port, or one the CM picks when 0).
Status connect_queue_pair(ChannelResources &res, sockaddr_storage dst, uint16_t local_port, unsigned i, unsigned want,
                          const wire::ChannelToken &token, int ms, Clock::time_point deadline) {
    rdma_cm_id *raw = nullptr;
    if (rdma_create_id(res.events.get(), &raw, nullptr, RDMA_PS_TCP) != 0) return fail_errno("rdma_create_id");
    CmConnection conn(raw);
    sockaddr_storage src{};
    sockaddr *from = nullptr;  // the CM picks
    if (local_port) {
        auto routed = route_source(dst);
        if (!routed) return fail(routed.error());
        src = with_port(*routed, local_port);
        from = reinterpret_cast<sockaddr *>(&src);
    }
    if (rdma_resolve_addr(raw, from, reinterpret_cast<sockaddr *>(&dst), ms) != 0)
        return fail_errno("rdma_resolve_addr " + address_string(dst));
    if (auto ok = expect_event(res.events.get(), raw, RDMA_CM_EVENT_ADDR_RESOLVED, deadline,
                               "resolve the server's RDMA address");
        !ok)
        return ok;
    if (rdma_resolve_route(raw, ms) != 0) return fail_errno("rdma_resolve_route");
    if (auto ok = expect_event(res.events.get(), raw, RDMA_CM_EVENT_ROUTE_RESOLVED, deadline, "resolve the route"); !ok)
        return ok;
    if (!res.device())
        if (auto ok = res.attach_device(raw->verbs); !ok) return ok;
    // The channel owns the connection from here; a retry replaces it.
    if (auto ok = res.add_connection(i, conn); !ok) return ok;
    log::debug("event=rdma_queue_pair index=" + std::to_string(i) + " qp_num=" + std::to_string(raw->qp->qp_num));
    auto data = wire::encode_connect({static_cast<uint8_t>(i), static_cast<uint8_t>(want), token});
    auto p = conn_param(data.data(), static_cast<uint8_t>(data.size()));
    if (rdma_connect(raw, &p) != 0) return fail_errno("rdma_connect");
    return expect_event(res.events.get(), raw, RDMA_CM_EVENT_ESTABLISHED, deadline,
                        ("connect queue pair " + std::to_string(i)).c_str());
}

}  // namespace

Status connect_channel(ChannelResources &res, const sockaddr_storage &server, uint16_t port,
                       const wire::ChannelTokens &tokens, unsigned timeout_s) {
    if (tokens.per_index.size() != 1 && tokens.per_index.size() != res.params.queue_pairs())
        return fail_msg("RDMA channel: " + std::to_string(tokens.per_index.size()) + " tokens for " +
                        std::to_string(res.params.queue_pairs()) + " queue pairs");
    auto ch = new_event_channel();
    if (!ch) return fail(ch.error());
    res.events = std::move(*ch);
    auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
    sockaddr_storage dst = with_port(server, port);
    const unsigned want = res.params.queue_pairs();
    int ms = static_cast<int>(std::min(timeout_s, 30u) * 1000);
    // iWARP connects from a real TCP port that the RDMA CM picks without
    // asking TCP, so rdma_connect can find it taken (EADDRINUSE; seen on
    // siw beside many TIME_WAIT sockets). Nothing reached the server then:
    // the queue pair starts again with a new id, and so a new port.
    constexpr unsigned kConnectTries = 8;
    for (unsigned i = 0; i < want; ++i) {
        const wire::ChannelToken &token = tokens.for_index(i);
        Status connected = connect_queue_pair(res, dst, test_connect_from_port(), i, want, token, ms, deadline);
        for (unsigned tries = 1; !connected && connected.error().code == -EADDRINUSE && tries < kConnectTries; ++tries) {
            log::info("event=rdma_connect_retry queue_pair=" + std::to_string(i) + " try=" + std::to_string(tries + 1) +
                      " reason=\"" + connected.error().message + "\"");
            connected = connect_queue_pair(res, dst, 0, i, want, token, ms, deadline);
        }
        if (!connected) return connected;
    }
    return {};
}

}  // namespace rftp::middleware::rdma
