// A session's RDMA channel, from RADR to the end of the session: the budget
// reservation, the listener and resources while the client connects, then
// the running channel that every RSTR and RRTR of the session reuses.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "daemon/config/options.h"
#include "daemon/rdma/rdma_budget.h"
#include "middleware/rdma/channel.h"
#include "middleware/rdma/cm_setup.h"

namespace rftp::daemon {

class SessionRdma {
public:
    // What RADR asked for, capped by the config.
    static middleware::rdma::ChannelParams grant(const RdmaOptions &o, uint64_t streams, uint64_t block,
                                                 uint64_t iodepth, unsigned stall_timeout_s);

    // What a channel with these parameters pins (and reserves from
    // rdma.max_pinned): its pool and message area, in whole 2 MiB pages.
    static uint64_t pinned_bytes(const middleware::rdma::ChannelParams &params);
    // The largest of those over every block size a client may ask for. A
    // config whose max_pinned is below it refuses some RADRs always (450):
    // rftpd refuses such a config instead (exit 3), saying what it needs.
    static uint64_t largest_channel(const RdmaOptions &o);

    // Reserves pinned memory, allocates the pool and listens on local's
    // address. Error codes: -ENOMEM (limit reached: 450), -ENODEV (no RDMA
    // device serves the address), others (451).
    static Result<std::shared_ptr<SessionRdma>> prepare(RdmaBudget &budget, const RdmaOptions &o,
                                                        const sockaddr_storage &local,
                                                        const middleware::rdma::ChannelParams &params);

    uint16_t port() const { return listener_ ? listener_->port() : 0; }
    const wire::ChannelToken &token() const { return token_; }
    // Under TLS: the queue pairs must show these instead of token(), which
    // the RADR reply still carries as the nonce (middleware/tls/token_binding.h).
    void expect_tokens(wire::ChannelTokens bound) { expected_ = std::move(bound); }
    const middleware::rdma::ChannelParams &params() const { return params_; }

    // Blocking, off the loop: waits for the client's queue pairs and starts the channel.
    Status accept(unsigned timeout_s, const std::string &label,
                  std::function<void(const Error &)> on_failure,
                  const std::function<void(const std::string &)> &on_rejected);

    // The running channel; nullptr before accept succeeded. Usable until a
    // transfer on it fails or is aborted. Safe while accept runs (STAT, ABOR
    // and QUIT are served meanwhile).
    middleware::rdma::Channel *channel() const {
        std::lock_guard lock(mutex_);
        return channel_.get();
    }
    bool usable() const {
        std::lock_guard lock(mutex_);
        return channel_ && channel_->usable();
    }

    // The session is closing: stop waiting for connections, stop a transfer.
    // May wait for the channel's lock, so not on the event loop; there,
    // stop_setup() (lock-free) makes a setup in progress give up at once.
    void cancel();
    void stop_setup() { cancelled_ = true; }

private:
    SessionRdma() = default;
    middleware::rdma::ChannelParams params_;
    wire::ChannelToken token_{};
    std::optional<wire::ChannelTokens> expected_;
    std::atomic<bool> cancelled_{false};
    mutable std::mutex mutex_;  // guards channel_ between the accepting thread and the loop
    // Declared in creation order: released in reverse (the channel first).
    RdmaBudget::Reservation reservation_;
    std::optional<middleware::rdma::ChannelResources> resources_;
    std::unique_ptr<middleware::rdma::ChannelListener> listener_;
    std::unique_ptr<middleware::rdma::Channel> channel_;
};

}  // namespace rftp::daemon
