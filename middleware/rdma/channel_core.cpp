#include "middleware/rdma/channel_core.h"

namespace rftp::middleware::rdma {

ChannelCore::ChannelCore(ChannelResources resources, std::string label, std::function<void(const Error &)> on_failure)
    : res(std::move(resources)),
      label(std::move(label)),
      pool(res),
      link(res, this->label),
      on_failure_(std::move(on_failure)) {}

bool ChannelCore::fail(const Error &e, bool tell_peer, uint32_t file_id) {
    if (stopping || !latch.trip(e)) return false;
    if (tell_peer) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::abort;
        m.file_id = file_id;
        m.status = wire::abort_status(e.code);
        m.text = e.message;
        (void)link.send(m);  // failing to tell the peer changes nothing here: the channel has failed
    }
    if (on_failure_) on_failure_(e);
    return true;
}

}  // namespace rftp::middleware::rdma
