// Setting up a channel's connections through rdma_cm. The server only
// listens (RADR): the client connects every queue pair to it, presenting
// the one-time token in each request's private data, so the channel works
// through firewalls and NAT the way passive FTP does. A request with a wrong
// token, a foreign device or a duplicate index is rejected and reported; the
// listener keeps waiting for the rightful client until its deadline.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/result.h"
#include "middleware/rdma/channel_resources.h"
#include "protocol/rdma_connect.h"

namespace rftp::middleware::rdma {

class ChannelListener {
public:
    // Binds an rdma_cm listener to the address of local (port from
    // [port_min, port_max], 0/0: any). Fails when no RDMA device serves it.
    static Result<std::unique_ptr<ChannelListener>> listen(const sockaddr_storage &local, uint16_t port_min,
                                                           uint16_t port_max);
    ~ChannelListener();
    uint16_t port() const { return port_; }

    // Accepts resources.params.queue_pairs() connections, each carrying its token, into
    // resources. Gives up after timeout_s, or soon after *cancelled is set.
    // on_rejected is told about every refused request.
    Status accept(ChannelResources &resources, const wire::ChannelTokens &tokens, unsigned timeout_s,
                  const std::atomic<bool> &cancelled, const std::function<void(const std::string &)> &on_rejected);

private:
    ChannelListener() = default;
    EventChannel events_;
    CmConnection listen_id_;
    uint16_t port_ = 0;
};

// Client: connects every queue pair of resources to server:port, each with its token.
Status connect_channel(ChannelResources &resources, const sockaddr_storage &server, uint16_t port,
                       const wire::ChannelTokens &tokens, unsigned timeout_s);

// "192.0.2.1" for logs.
std::string address_string(const sockaddr_storage &addr);

}  // namespace rftp::middleware::rdma
