// RAII owners for verbs and rdma_cm objects: each releases exactly once, and
// members declared in creation order are released in reverse, as rdma-core
// does by hand on its error paths. A queue pair is owned by its CmConnection
// (rdma_destroy_qp before rdma_destroy_id).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <cstddef>
#include <memory>
#include <utility>

namespace rftp::middleware::rdma {

struct EventChannelDeleter { void operator()(rdma_event_channel *c) const { rdma_destroy_event_channel(c); } };
struct PdDeleter { void operator()(ibv_pd *p) const { ibv_dealloc_pd(p); } };
struct CompChannelDeleter { void operator()(ibv_comp_channel *c) const { ibv_destroy_comp_channel(c); } };
struct CqDeleter { void operator()(ibv_cq *c) const { ibv_destroy_cq(c); } };
struct MrDeleter { void operator()(ibv_mr *m) const { ibv_dereg_mr(m); } };
struct CmEventDeleter { void operator()(rdma_cm_event *e) const { rdma_ack_cm_event(e); } };

using EventChannel = std::unique_ptr<rdma_event_channel, EventChannelDeleter>;
using ProtectionDomain = std::unique_ptr<ibv_pd, PdDeleter>;
using CompletionChannel = std::unique_ptr<ibv_comp_channel, CompChannelDeleter>;
using CompletionQueue = std::unique_ptr<ibv_cq, CqDeleter>;
using MemoryRegion = std::unique_ptr<ibv_mr, MrDeleter>;
using CmEvent = std::unique_ptr<rdma_cm_event, CmEventDeleter>;

// One rdma_cm identifier and the queue pair created on it, if any.
class CmConnection {
public:
    CmConnection() = default;
    explicit CmConnection(rdma_cm_id *id) : id_(id) {}
    CmConnection(CmConnection &&o) noexcept : id_(std::exchange(o.id_, nullptr)) {}
    CmConnection &operator=(CmConnection &&o) noexcept {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, nullptr);
        }
        return *this;
    }
    CmConnection(const CmConnection &) = delete;
    CmConnection &operator=(const CmConnection &) = delete;
    ~CmConnection() { reset(); }

    rdma_cm_id *get() const { return id_; }
    ibv_qp *qp() const { return id_ ? id_->qp : nullptr; }
    explicit operator bool() const { return id_ != nullptr; }
    rdma_cm_id *release() { return std::exchange(id_, nullptr); }

    void reset() {
        if (!id_) return;
        if (id_->qp) rdma_destroy_qp(id_);
        rdma_destroy_id(id_);
        id_ = nullptr;
    }

private:
    rdma_cm_id *id_ = nullptr;
};

}  // namespace rftp::middleware::rdma
