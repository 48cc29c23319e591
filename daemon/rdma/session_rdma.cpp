#include "daemon/rdma/session_rdma.h"

#include <algorithm>

#include "middleware/block_memory.h"
#include "middleware/random_token.h"
#include "middleware/rdma/device_check.h"

namespace rftp::daemon {

using middleware::rdma::ChannelParams;

ChannelParams SessionRdma::grant(const RdmaOptions &o, uint64_t streams, uint64_t block, uint64_t iodepth,
                                 unsigned stall_timeout_s) {
    ChannelParams p;
    p.streams = static_cast<unsigned>(std::clamp<uint64_t>(streams, 1, o.max_streams));
    uint64_t b = std::clamp<uint64_t>(block, 64u << 10, o.max_block_size);
    p.block_size = static_cast<uint32_t>(b / 4096 * 4096);  // page-aligned blocks: O_DIRECT and NICs like them
    p.iodepth = static_cast<unsigned>(std::clamp<uint64_t>(iodepth, 1, o.max_iodepth));
    p.blocks = static_cast<unsigned>(std::clamp<uint64_t>(o.pool_size / p.block_size, 2, 1024));
    p.workers = o.workers.value_or(middleware::rdma::default_workers());
    p.stall_timeout_s = stall_timeout_s;
    return p;
}

uint64_t SessionRdma::pinned_bytes(const ChannelParams &params) {
    auto layout = middleware::rdma::MessageLayout::for_params(params);
    return middleware::BlockMemory::mapped_size(params.pool_bytes()) +
           middleware::BlockMemory::mapped_size(layout.total);
}

uint64_t SessionRdma::largest_channel(const RdmaOptions &o) {
    uint64_t largest = 0;
    // Blocks are granted in whole pages from 64 KiB up: every size one may get.
    for (uint64_t block = 64u << 10; block <= std::max<uint64_t>(o.max_block_size, 64u << 10); block += 4096)
        largest = std::max(largest, pinned_bytes(grant(o, o.max_streams, block, o.max_iodepth, 0)));
    return largest;
}

Result<std::shared_ptr<SessionRdma>> SessionRdma::prepare(RdmaBudget &budget, const RdmaOptions &o,
                                                         const sockaddr_storage &local, const ChannelParams &params) {
    std::shared_ptr<SessionRdma> r(new SessionRdma());
    r->params_ = params;
    // As mapped (whole 2 MiB pages), which is what registering them pins.
    uint64_t pinned = pinned_bytes(params);
    if (auto problem = middleware::rdma::memlock_problem(pinned)) return fail_msg(*problem, -ENOMEM);
    auto reservation = budget.reserve(pinned, params.queue_pairs());
    if (!reservation) return fail(reservation.error());
    r->reservation_ = std::move(*reservation);
    auto resources = middleware::rdma::ChannelResources::allocate(params);
    if (!resources) return fail(resources.error());
    r->resources_.emplace(std::move(*resources));
    auto listener = middleware::rdma::ChannelListener::listen(local, o.port_min, o.port_max);
    if (!listener) return fail(listener.error());
    r->listener_ = std::move(*listener);
    auto token = middleware::new_random_token();
    if (!token) return fail(token.error());
    r->token_ = *token;
    return r;
}

Status SessionRdma::accept(unsigned timeout_s, const std::string &label, std::function<void(const Error &)> on_failure,
                           const std::function<void(const std::string &)> &on_rejected) {
    if (!resources_ || !listener_) return fail_msg("RDMA channel already set up");
    if (auto ok = listener_->accept(*resources_, expected_.value_or(wire::ChannelTokens(token_)), timeout_s, cancelled_, on_rejected); !ok) return ok;
    auto channel = middleware::rdma::Channel::start(std::move(*resources_), label, std::move(on_failure));
    resources_.reset();
    listener_.reset();
    if (!channel) return fail(channel.error());
    std::lock_guard lock(mutex_);
    channel_ = std::move(*channel);
    if (cancelled_) channel_->abort("the session ended");  // cancel() came while we were connecting
    return {};
}

void SessionRdma::cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    if (channel_) channel_->abort("the session ended");
}

}  // namespace rftp::daemon
