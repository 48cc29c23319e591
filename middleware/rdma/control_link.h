// The channel's control link: messages to the peer over the control queue
// pair (index 0). Outgoing messages wait in a FIFO until a send slot and a
// credit (control_credits.h) let them go, so they leave in the order they
// were sent. Its lock is a leaf: taken under the channel's, never the
// other way round, and a control SEND's completion needs no other lock.
// A failure to post comes back as a Status; the caller fails the channel.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "common/result.h"
#include "middleware/rdma/channel_resources.h"
#include "middleware/rdma/control_credits.h"
#include "protocol/rdma_message.h"

namespace rftp::middleware::rdma {

class ControlLink {
public:
    // res must outlive the link; label prefixes its debug lines.
    ControlLink(ChannelResources &res, std::string label);

    // Queues msg and sends whatever may go.
    Status send(wire::RdmaMessage msg);
    // A control SEND completed: its slot is free again.
    Status send_completed(uint32_t slot);
    // A control message arrived in receive slot: posts that receive again,
    // which is a credit owed to the peer.
    Status repost_receive(uint32_t slot);
    // The credits a received message returned. An error is the peer's:
    // more than it could owe.
    Status take_credits(uint16_t credits);
    // Sends whatever may go now (after credits came back). An error is this side's.
    Status flush();

private:
    Status flush_locked();
    Status post_locked(wire::RdmaMessage &m);

    ChannelResources &res_;
    std::string label_;
    std::mutex mutex_;
    ControlCredits credits_{kControlDepth};
    std::deque<wire::RdmaMessage> queue_;
    std::vector<uint32_t> free_slots_;
};

}  // namespace rftp::middleware::rdma
