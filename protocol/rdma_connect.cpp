#include "protocol/rdma_connect.h"

#include "protocol/big_endian.h"
#include "protocol/rdma_message.h"

namespace rftp::wire {

std::array<uint8_t, kConnectDataSize> encode_connect(const ConnectData &d) {
    std::array<uint8_t, kConnectDataSize> out{};
    put_be<uint16_t>(out.data(), kConnectMagic);
    out[2] = kRdmaVersion;
    out[3] = d.index;
    out[4] = d.count;
    for (std::size_t i = 0; i < kTokenSize; ++i) out[8 + i] = d.token[i];
    return out;
}

Result<ConnectData> decode_connect(std::span<const uint8_t> bytes) {
    if (bytes.size() < kConnectDataSize) return fail_msg("connection request without rftp private data");
    const uint8_t *p = bytes.data();
    if (get_be<uint16_t>(p) != kConnectMagic) return fail_msg("connection request with foreign private data");
    if (p[2] != kRdmaVersion)
        return fail_msg("connection request of protocol version " + std::to_string(p[2]) + ", this server speaks " +
                        std::to_string(kRdmaVersion));
    if (p[5] != 0 || p[6] != 0 || p[7] != 0) return fail_msg("connection request with its reserved bytes set");
    ConnectData d;
    d.index = p[3];
    d.count = p[4];
    if (d.count < 2 || d.index >= d.count) return fail_msg("connection request with queue pair index out of range");
    for (std::size_t i = 0; i < kTokenSize; ++i) d.token[i] = p[8 + i];
    return d;
}

}  // namespace rftp::wire
