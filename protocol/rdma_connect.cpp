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

std::string token_hex(const ChannelToken &t) {
    static const char *digits = "0123456789abcdef";
    std::string s;
    for (uint8_t b : t) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

Result<ChannelToken> parse_token_hex(std::string_view hex) {
    if (hex.size() != 2 * kTokenSize) return fail_msg("token must be " + std::to_string(2 * kTokenSize) + " hex digits");
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    ChannelToken t{};
    for (std::size_t i = 0; i < kTokenSize; ++i) {
        int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return fail_msg("token has a character that is not a hex digit");
        t[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return t;
}

}  // namespace rftp::wire
