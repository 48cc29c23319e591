// What an rftp client puts in the private data of each rdma_cm connection
// request (docs/protocol.md, "RDMA channel"): which queue pair of the channel
// this is, how many there are, and the one-time token the server handed out
// in its RADR reply (under TLS, bound to the session and to the queue
// pair's index). The server rejects a request whose token is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/token.h"

namespace rftp::wire {

inline constexpr std::size_t kConnectDataSize = 24;  // fits the 56 bytes an IB/RoCE request carries
inline constexpr uint16_t kConnectMagic = 0x5243;     // "RC"

using ChannelToken = Token;

// The token each queue pair of a channel shows: the RADR reply's, the same
// for every one (a session in clear), or one per index, bound to the
// control connection's TLS session (middleware/tls/token_binding.h).
struct ChannelTokens {
    std::vector<ChannelToken> per_index;

    ChannelTokens() = default;
    // One token for every queue pair; implicit, as that is the usual case.
    ChannelTokens(const ChannelToken &all) : per_index{all} {}  // NOLINT(google-explicit-constructor)
    const ChannelToken &for_index(unsigned index) const {
        return per_index.size() == 1 ? per_index.front() : per_index.at(index);
    }
};

struct ConnectData {
    uint8_t index = 0;  // 0: the control queue pair; 1..count-1: data queue pairs
    uint8_t count = 0;  // queue pairs in the channel (streams + 1)
    ChannelToken token{};
};

std::array<uint8_t, kConnectDataSize> encode_connect(const ConnectData &d);
// bytes may be longer than kConnectDataSize (InfiniBand pads private data);
// checks magic, version and index < count.
Result<ConnectData> decode_connect(std::span<const uint8_t> bytes);

}  // namespace rftp::wire
