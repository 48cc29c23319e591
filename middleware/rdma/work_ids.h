// A work request's wr_id says what it is without any lookup: its kind, the
// queue pair (0 control, 1.. data) and an index (a block, or a message slot).
#pragma once

#include <cstdint>

namespace rftp::middleware::rdma {

enum class WorkKind : uint8_t {
    control_recv = 1,  // index: control receive slot
    control_send = 2,  // index: control send slot
    data_recv = 3,     // index: receive slot of that data queue pair
    write = 4,         // index: local block (signalled only with immediate data)
    notice = 5,        // index: local block (the SEND after a WRITE)
};

constexpr uint64_t make_wr_id(WorkKind kind, unsigned qp, uint32_t index) {
    return static_cast<uint64_t>(kind) << 56 | static_cast<uint64_t>(qp & 0xffffff) << 32 | index;
}
constexpr WorkKind wr_kind(uint64_t id) { return static_cast<WorkKind>(id >> 56); }
constexpr unsigned wr_qp(uint64_t id) { return static_cast<unsigned>((id >> 32) & 0xffffff); }
constexpr uint32_t wr_index(uint64_t id) { return static_cast<uint32_t>(id); }

}  // namespace rftp::middleware::rdma
