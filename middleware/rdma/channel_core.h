// What the parts of one channel share: its verbs resources, the block pool,
// the control link and the failure latch. The parts (channel.h) each keep
// their own state under their own lock; nothing here takes any of theirs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "common/result.h"
#include "middleware/rdma/block_pool.h"
#include "middleware/rdma/channel_resources.h"
#include "middleware/rdma/control_link.h"
#include "middleware/rdma/failure_latch.h"

namespace rftp::middleware::rdma {

class ChannelCore {
public:
    ChannelCore(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure);

    // A failure of the channel. The first one is latched, told to the peer
    // when tell_peer (an abort naming file_id) and reported to the owner;
    // returns whether it was the first. Nothing is latched once stopping.
    bool fail(const Error &e, bool tell_peer, uint32_t file_id);
    bool usable() const { return !latch.tripped() && !stopping.load(); }
    const ChannelParams &params() const { return res.params; }

    ChannelResources res;
    const std::string label;
    BlockPool pool;
    ControlLink link;
    FailureLatch latch;
    std::atomic<bool> stopping{false};

private:
    std::function<void(const Error &)> on_failure_;
};

}  // namespace rftp::middleware::rdma
