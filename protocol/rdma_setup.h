// RADR (docs/protocol.md, "RDMA channel"): the client asks for a channel
// of so many data queue pairs, block bytes and WRITEs in flight; the server
// answers with what it accepted, the rdma_cm port to connect to and the
// channel's one-time token.
//
//     RADR <streams> <block> <depth> [AHEAD]
//       ->  200 RADR port=<p> streams=<s> block=<b> depth=<d> token=<32 hex>
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/token.h"

namespace rftp::ftp {

// The most data queue pairs a channel has: the connection data counts the
// queue pairs in a byte (rdma_connect.h), and no server grants more.
inline constexpr unsigned kMaxRdmaStreams = 64;

struct RdmaRequest {
    uint64_t streams = 0;  // each above 0; large values are capped by the server, not refused
    uint64_t block_size = 0;
    uint64_t depth = 0;
    bool ahead = false;  // AHEAD: the client takes grants ahead (sent only where FEAT says RDMA ... AHEAD)

    bool operator==(const RdmaRequest &) const = default;
};

struct RdmaGrant {
    uint16_t port = 0;
    unsigned streams = 0;
    uint32_t block_size = 0;
    unsigned depth = 0;
    wire::Token token{};

    bool operator==(const RdmaGrant &) const = default;
};

// The command line, "RADR <streams> <block> <depth>", with " AHEAD" when asked.
std::string format_rdma_request(const RdmaRequest &r);
// args: what follows "RADR"; three decimal numbers above 0, then AHEAD or nothing.
std::optional<RdmaRequest> parse_rdma_request(std::string_view args);

// The 200 reply's text.
std::string format_rdma_grant(const RdmaGrant &g);
// None unless every field is there, in range (streams at most
// kMaxRdmaStreams) and the port, streams, block and depth are above 0.
// Fields may come in any order; unknown ones are skipped.
std::optional<RdmaGrant> parse_rdma_grant(std::string_view text);

}  // namespace rftp::ftp
