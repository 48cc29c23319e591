// Wire format of one block on a parallel-stream data connection
// (docs/protocol.md, "Parallel streams"). The 17-byte header has the layout
// of GridFTP's MODE E header (GFD.20): descriptor, count, offset, big-endian.
#pragma once

#include <array>
#include <cstdint>

#include "common/result.h"

namespace rftp::ftp {

inline constexpr std::size_t kFrameHeaderSize = 17;

enum FrameDescriptor : uint8_t {
    kFrameData = 0x00,  // count bytes of payload for [offset, offset+count) follow
    // Sender to receiver: nothing more on this connection unless asked;
    // count 0, offset = end of file. Receiver to sender, the same frame
    // echoed: every block this connection carried arrived intact and is
    // written, so the sender may close.
    kFrameEod = 0x08,
    // Sender to receiver, where the session agreed to it (OPTS DATAKEEP ON
    // UNECHOED) and the transfer is at most one block: the end of data,
    // and no echo is wanted. The sender goes on with its next transfer at
    // once; the receiver never answers it.
    kFrameEodUnechoed = 0x0C,
    // Receiver to sender, on the same connection: the block [offset,
    // offset+count) failed its CRC32C, send it again (GFD.20's "suspected
    // errors" bit). No payload follows.
    kFrameResend = 0x20,
};

struct FrameHeader {
    uint8_t descriptor = kFrameData;
    uint64_t count = 0;
    uint64_t offset = 0;
};

std::array<uint8_t, kFrameHeaderSize> encode_frame(const FrameHeader &h);

// Decodes and checks a header against what the receiver agreed to: a data
// frame of 1..max_count bytes whose range ends at or before limit, or an EOD
// frame (echoed or not) with count 0. Anything else is a protocol violation.
Result<FrameHeader> decode_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit);

// Decodes a frame that came back from the receiver: a resend request of
// 1..max_count bytes whose range ends at or before limit, or the echoed EOD
// (count 0, offset at or before limit). Whether a request names a block of
// the transfer exactly (on its block grid; not necessarily one this
// connection carried: a peer may ask at most 64 x 3 blocks per connection
// that way, its own bandwidth), and an EOD the file's size, is for the
// sender to check.
Result<FrameHeader> decode_receiver_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit);

}  // namespace rftp::ftp
