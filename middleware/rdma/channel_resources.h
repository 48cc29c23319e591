// Everything one RDMA channel holds in the kernel and the NIC, allocated once
// per channel and reused by every file: a protection domain of its own (so
// a peer can only reach memory this channel registered), one completion
// queue with its event channel, the registered block pool, the registered
// message area, and the rdma_cm connections with their queue pairs
// (index 0: control, 1..streams: data). Members are declared in creation
// order, so they are released in reverse.
#pragma once

#include <vector>

#include "common/result.h"
#include "middleware/block_memory.h"
#include "middleware/rdma/channel_params.h"
#include "middleware/rdma/verbs_handles.h"

namespace rftp::middleware::rdma {

// Where each small buffer lives in the message area.
struct MessageLayout {
    std::size_t control_recv = 0;  // kControlDepth x kControlSlot
    std::size_t control_send = 0;  // kControlDepth x kControlSlot
    std::size_t data_recv = 0;     // streams x blocks x kNoticeSlot
    std::size_t notices = 0;       // blocks x kNoticeSlot, one per local block
    std::size_t total = 0;

    static MessageLayout for_params(const ChannelParams &p);
};

struct ChannelResources {
    ChannelParams params;
    MessageLayout layout;
    EventChannel events;
    ProtectionDomain pd;
    CompletionChannel completions;
    CompletionQueue cq;
    BlockMemory pool;
    MemoryRegion pool_mr;
    BlockMemory messages;
    MemoryRegion messages_mr;
    std::vector<CmConnection> connections;  // sized queue_pairs(); filled as they connect
    // A queue pair was made anew (the client's connect retry): completions
    // of the one it replaced may still come (Channel::drop_stale).
    bool replaced_a_queue_pair = false;

    // Allocates the pool and message area (no device needed yet).
    static Result<ChannelResources> allocate(const ChannelParams &params);
    // On the first connection's device: PD, completion channel and queue, registrations.
    Status attach_device(ibv_context *verbs);
    // Creates the queue pair of connection index on conn and posts its
    // receives. Takes conn over on success only; on failure the caller still
    // owns it (an unacknowledged rdma_cm event must be acked before the id dies).
    Status add_connection(unsigned index, CmConnection &conn);

    uint8_t *block(uint32_t i) const { return pool.data() + static_cast<std::size_t>(i) * params.block_stride(); }
    uint8_t *control_recv_slot(uint32_t i) const { return messages.data() + layout.control_recv + i * kControlSlot; }
    uint8_t *control_send_slot(uint32_t i) const { return messages.data() + layout.control_send + i * kControlSlot; }
    uint8_t *data_recv_slot(unsigned qp, uint32_t i) const {
        return messages.data() + layout.data_recv + ((qp - 1) * static_cast<std::size_t>(params.blocks) + i) * kNoticeSlot;
    }
    uint8_t *notice_slot(uint32_t block) const { return messages.data() + layout.notices + block * kNoticeSlot; }

    Status post_control_recv(uint32_t slot);
    Status post_data_recv(unsigned qp, uint32_t slot);
    ibv_qp *qp(unsigned index) const { return connections[index].qp(); }
    ibv_context *device() const { return pd ? pd->context : nullptr; }
};

}  // namespace rftp::middleware::rdma
