#include "middleware/rdma/control_link.h"

#include <cstdlib>

#include "common/log.h"
#include "middleware/rdma/verbs_error.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {
ControlLink::ControlLink(ChannelResources &res, std::string label) : res_(res), label_(std::move(label)) {
    for (uint32_t i = kControlDepth; i > 0; --i) free_slots_.push_back(i - 1);
}

Status ControlLink::send(wire::RdmaMessage msg) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(msg));
    return flush_locked();
}

Status ControlLink::send_completed(uint32_t slot) {
    std::lock_guard lock(mutex_);
    free_slots_.push_back(slot);
    return flush_locked();
}

Status ControlLink::repost_receive(uint32_t slot) {
    std::lock_guard lock(mutex_);
    if (auto ok = res_.post_control_recv(slot); !ok) return ok;
    credits_.on_reposted();
    return {};
}

Status ControlLink::take_credits(uint16_t credits) {
    std::lock_guard lock(mutex_);
    return credits_.on_returned(credits);
}

Status ControlLink::flush() {
    std::lock_guard lock(mutex_);
    return flush_locked();
}

Status ControlLink::flush_locked() {
    while (!queue_.empty()) {
        bool credit_only = queue_.front().type == wire::RdmaMessageType::credit;
        if (!credits_.may_send(credit_only) || free_slots_.empty()) break;
        wire::RdmaMessage m = std::move(queue_.front());
        queue_.pop_front();
        if (auto ok = post_locked(m); !ok) return ok;
    }
    // Whatever is still queued (or nothing), return owed credits when they
    // pile up: with both sides blocked on their last credit, this is what
    // unblocks them.
    if (credits_.should_return_credits() && credits_.may_send(true) && !free_slots_.empty()) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::credit;
        return post_locked(m);
    }
    return {};
}

Status ControlLink::post_locked(wire::RdmaMessage &m) {
    uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    m.credits = credits_.on_send();
    if (log::enabled(log::Level::debug)) log::debug(label_ + " event=rdma_control_send " + wire::header_fields(m));
    uint8_t *buf = res_.control_send_slot(slot);
    std::size_t len = wire::encode(m, {buf, kControlSlot});
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), res_.messages_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(WorkKind::control_send, 0, slot);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    // Providers differ in the sign of the errno they return (siw: negative).
    if (int rc = std::abs(ibv_post_send(res_.qp(0), &wr, &bad))) return fail_verbs("post a control message", rc);
    return {};
}

}  // namespace rftp::middleware::rdma
