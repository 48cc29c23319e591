#include "middleware/rdma/channel_resources.h"

#include <fcntl.h>

#include <cstdlib>

#include "middleware/rdma/verbs_error.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

MessageLayout MessageLayout::for_params(const ChannelParams &p) {
    MessageLayout l;
    l.control_recv = 0;
    l.control_send = l.control_recv + kControlDepth * kControlSlot;
    l.data_recv = l.control_send + kControlDepth * kControlSlot;
    l.notices = l.data_recv + static_cast<std::size_t>(p.streams) * p.blocks * kNoticeSlot;
    l.total = round_up(l.notices + static_cast<std::size_t>(p.blocks) * kNoticeSlot, 4096);
    return l;
}

Result<ChannelResources> ChannelResources::allocate(const ChannelParams &params) {
    ChannelResources r;
    r.params = params;
    r.layout = MessageLayout::for_params(params);
    r.pool = BlockMemory::allocate(params.pool_bytes());
    if (!r.pool) return fail_errno("allocate a block pool of " + std::to_string(params.pool_bytes()) + " bytes");
    r.messages = BlockMemory::allocate(r.layout.total);
    if (!r.messages) return fail_errno("allocate the RDMA message area");
    r.connections.resize(params.queue_pairs());
    return r;
}

Status ChannelResources::attach_device(ibv_context *verbs) {
    pd.reset(ibv_alloc_pd(verbs));
    if (!pd) return fail_errno("ibv_alloc_pd");
    completions.reset(ibv_create_comp_channel(verbs));
    if (!completions) return fail_errno("ibv_create_comp_channel");
    // The dispatcher polls the channel's fd next to others; it must not block.
    int flags = ::fcntl(completions->fd, F_GETFL);
    if (flags < 0 || ::fcntl(completions->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return fail_errno("make the completion channel non-blocking");
    int depth = static_cast<int>(2 * kControlDepth + params.streams * (params.blocks + 2 * params.iodepth + 2) + 16);
    cq.reset(ibv_create_cq(verbs, depth, nullptr, completions.get(), 0));
    if (!cq) return fail_errno("ibv_create_cq of " + std::to_string(depth) + " entries");
    if (int rc = std::abs(ibv_req_notify_cq(cq.get(), 0))) return fail_errno("ibv_req_notify_cq", rc);
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    pool_mr.reset(ibv_reg_mr(pd.get(), pool.data(), pool.size(), access));
    if (!pool_mr) {
        int err = errno;
        if (err == ENOMEM || err == EPERM || err == EAGAIN)
            return fail_errno("register " + std::to_string(pool.size()) +
                                  " bytes of block pool (raise the locked-memory limit: ulimit -l, or LimitMEMLOCK= "
                                  "in the systemd unit)",
                              err);
        return fail_errno("ibv_reg_mr of the block pool", err);
    }
    messages_mr.reset(ibv_reg_mr(pd.get(), messages.data(), messages.size(), IBV_ACCESS_LOCAL_WRITE));
    if (!messages_mr) return fail_errno("ibv_reg_mr of the message area");
    return {};
}

Status ChannelResources::add_connection(unsigned index, CmConnection &conn) {
    if (index >= connections.size()) return fail_msg("queue pair index out of range");
    if (conn.get()->verbs != device())
        return fail_msg("queue pair " + std::to_string(index) + " arrived on another RDMA device than the first");
    ibv_qp_init_attr attr{};
    attr.send_cq = cq.get();
    attr.recv_cq = cq.get();
    attr.qp_type = IBV_QPT_RC;
    attr.sq_sig_all = 0;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    if (index == 0) {
        attr.cap.max_send_wr = kControlDepth;
        attr.cap.max_recv_wr = kControlDepth;
    } else {
        attr.cap.max_send_wr = 2 * params.iodepth + 2;  // WRITE + SEND per block
        attr.cap.max_recv_wr = params.blocks;            // one notice per block this side can grant
    }
    if (rdma_create_qp(conn.get(), pd.get(), &attr) != 0)
        return fail_errno("rdma_create_qp for queue pair " + std::to_string(index));
    if (connections[index]) replaced_a_queue_pair = true;
    connections[index] = std::move(conn);
    // As promised: on failure the caller gets its connection back, without
    // the queue pair (the server's reject() destroys the id itself).
    auto hand_back = [&](Status failed) {
        rdma_destroy_qp(connections[index].get());
        conn = CmConnection(connections[index].release());
        return failed;
    };
    // Receives go up before the connection is accepted or requested, so the
    // peer's first message always finds one.
    if (index == 0) {
        for (uint32_t i = 0; i < kControlDepth; ++i)
            if (auto ok = post_control_recv(i); !ok) return hand_back(ok);
    } else {
        for (uint32_t i = 0; i < params.blocks; ++i)
            if (auto ok = post_data_recv(index, i); !ok) return hand_back(ok);
    }
    return {};
}

Status ChannelResources::post_control_recv(uint32_t slot) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(control_recv_slot(slot)), static_cast<uint32_t>(kControlSlot),
                messages_mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = make_wr_id(WorkKind::control_recv, 0, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    if (int rc = std::abs(ibv_post_recv(qp(0), &wr, &bad))) return fail_verbs("post a control receive", rc);
    return {};
}

Status ChannelResources::post_data_recv(unsigned q, uint32_t slot) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(data_recv_slot(q, slot)), static_cast<uint32_t>(kNoticeSlot),
                messages_mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = make_wr_id(WorkKind::data_recv, q, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr *bad = nullptr;
    if (int rc = std::abs(ibv_post_recv(qp(q), &wr, &bad))) return fail_verbs("post a notice receive", rc);
    return {};
}

}  // namespace rftp::middleware::rdma
