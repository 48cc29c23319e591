// The source pipeline's sender thread: it posts the ready blocks as RDMA
// WRITEs across the data queue pairs, up to iodepth in flight on each, in
// chains with one signalled completion per chain.
#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/rdma/source_pipeline.h"
#include "middleware/rdma/verbs_error.h"
#include "middleware/rdma/work_ids.h"

namespace rftp::middleware::rdma {

void SourcePipeline::sender_loop() {
    // Up to this many ready blocks go to one queue pair in one post, with one
    // signalled completion: fewer system calls and wake-ups per block.
    constexpr std::size_t kMaxChain = 8;
    const ChannelParams &params = core_.params();
    const unsigned streams = params.streams;
    std::unique_lock lock(mutex_);
    auto pick_qp = [&]() -> unsigned {
        for (unsigned i = 0; i < streams; ++i) {
            unsigned q = 1 + (next_qp_ + i) % streams;
            if (in_flight_[q] < params.iodepth) {
                next_qp_ = (next_qp_ + i + 1) % streams;
                return q;
            }
        }
        return 0;
    };
    std::vector<Posting> chain;
    for (;;) {
        unsigned qp = 0;
        sender_cv_.wait(lock, [&] {
            if (stopping_) return true;
            if (!file_ || file_->done || file_->to_send.empty()) return false;
            qp = pick_qp();
            return qp != 0;
        });
        if (stopping_) return;
        SourceFile &f = *file_;
        // Until the device has shown whether it takes an immediate, one block
        // at a time: the probe must not take a chain down with it.
        // At most half the iodepth per chain, so one chain is always in flight
        // while the next is posted (a chain completes only as a whole).
        std::size_t room = notice_mode_ == NoticeMode::unknown
                               ? 1
                               : std::min<std::size_t>(kMaxChain, std::max(1u, params.iodepth / 2));
        room = std::min<std::size_t>(room, params.iodepth - in_flight_[qp]);
        chain.clear();
        Status moved;
        while (chain.size() < room && !f.to_send.empty()) {
            uint32_t block = f.to_send.front();
            f.to_send.pop_front();
            moved = f.blocks.move(block, SourceBlock::ready, SourceBlock::posted);
            if (!moved) break;
            const wire::Grant &g = f.block_grant[block];
            chain.push_back({block, g, f.reads_zero_block(g, params.block_size) ? *f.zero_block : block});
        }
        if (!moved) {
            fail_locked(moved.error(), true);
            continue;
        }
        in_flight_[qp] += static_cast<unsigned>(chain.size());
        std::vector<uint32_t> members;
        for (const Posting &p : chain) members.push_back(p.block);
        f.chain_of[chain.back().block] = std::move(members);
        uint32_t file_id = f.id;
        sender_busy_ = true;
        lock.unlock();
        Status posted = post_chain(chain, qp, file_id);
        lock.lock();
        sender_busy_ = false;
        went_idle_locked();
        if (!posted) fail_locked(posted.error(), true);
    }
}

// Each block goes as RDMA WRITE WITH IMMEDIATE (the immediate names the
// sink's block) where the device takes it; otherwise as WRITE then SEND of a
// block_done notice on the same queue pair, which delivers them in order, so
// the notice never waits for the WRITE's local completion. Only the chain's
// last work request is signalled.
Status SourcePipeline::post_chain(const std::vector<Posting> &chain, unsigned qp, uint32_t file_id) {
    NoticeMode mode;
    {
        std::lock_guard lock(mutex_);
        mode = notice_mode_;
    }
    const std::size_t n = chain.size();
    std::vector<ibv_sge> sges(2 * n);
    std::vector<ibv_send_wr> wrs(2 * n);
    auto build = [&](bool with_imm) {
        std::size_t w = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const Posting &p = chain[i];
            bool last = i + 1 == n;
            // The data and its checksum trailer, in one WRITE.
            sges[w] = {reinterpret_cast<uintptr_t>(core_.pool.block(p.memory)),
                       p.grant.length + static_cast<uint32_t>(kBlockTrailerBytes), core_.res.pool_mr->lkey};
            ibv_send_wr &write = wrs[w];
            write = {};
            write.wr_id = make_wr_id(WorkKind::write, qp, p.block);
            write.sg_list = &sges[w];
            write.num_sge = 1;
            write.wr.rdma.remote_addr = p.grant.addr;
            write.wr.rdma.rkey = p.grant.rkey;
            if (with_imm) {
                write.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
                write.imm_data = htonl(p.grant.slot);
                write.send_flags = last ? IBV_SEND_SIGNALED : 0;
                ++w;
            } else {
                write.opcode = IBV_WR_RDMA_WRITE;
                ++w;
                wire::RdmaMessage m;
                m.type = wire::RdmaMessageType::block_done;
                m.file_id = file_id;
                m.slot = p.grant.slot;
                m.length = p.grant.length;
                uint8_t *buf = core_.res.notice_slot(p.block);
                std::size_t len = wire::encode(m, {buf, kNoticeSlot});
                sges[w] = {reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), core_.res.messages_mr->lkey};
                ibv_send_wr &send = wrs[w];
                send = {};
                send.wr_id = make_wr_id(WorkKind::notice, qp, p.block);
                send.sg_list = &sges[w];
                send.num_sge = 1;
                send.opcode = IBV_WR_SEND;
                send.send_flags = last ? IBV_SEND_SIGNALED : 0;
                ++w;
            }
        }
        for (std::size_t i = 0; i + 1 < w; ++i) wrs[i].next = &wrs[i + 1];
        wrs[w - 1].next = nullptr;
    };
    ibv_send_wr *bad = nullptr;
    if (mode != NoticeMode::write_then_send) {
        build(true);
        // Providers differ in the sign of the errno they return (siw: negative).
        int rc = std::abs(ibv_post_send(core_.res.qp(qp), wrs.data(), &bad));
        if (rc == 0) {
            if (mode == NoticeMode::unknown) {
                std::lock_guard lock(mutex_);
                notice_mode_ = NoticeMode::write_with_imm;
            }
            return {};
        }
        if (mode != NoticeMode::unknown || (rc != EINVAL && rc != EOPNOTSUPP && rc != ENOSYS))
            return fail_verbs("post RDMA WRITE WITH IMMEDIATE", rc);
        log::debug(core_.label + " event=rdma_notice device refuses WRITE WITH IMMEDIATE (" + std::strerror(rc) +
                   "); notifying with WRITE then SEND");
        std::lock_guard lock(mutex_);
        notice_mode_ = NoticeMode::write_then_send;
    }
    build(false);
    if (int rc = std::abs(ibv_post_send(core_.res.qp(qp), wrs.data(), &bad))) return fail_verbs("post RDMA WRITE and notice", rc);
    return {};
}

}  // namespace rftp::middleware::rdma
