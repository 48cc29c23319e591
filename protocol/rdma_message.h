// Wire format of the messages two rftp peers exchange over an RDMA channel
// (docs/protocol.md, "RDMA channel"): SEND/RECV on the control queue pair,
// plus the block-done notice on a data queue pair where the device has no
// RDMA WRITE WITH IMMEDIATE. Fixed layout, big-endian, versioned. Every
// field is checked on arrival; decode() refuses anything malformed, and the
// engine then checks what the fields mean (slots, offsets) against its state.
#pragma once

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "common/result.h"

namespace rftp::wire {

inline constexpr uint16_t kRdmaMagic = 0x5246;  // "RF"
inline constexpr uint8_t kRdmaVersion = 1;
inline constexpr std::size_t kRdmaHeaderSize = 16;
// Every receive buffer holds this much; no message is larger.
inline constexpr std::size_t kRdmaMaxMessage = 512;
inline constexpr std::size_t kGrantEntrySize = 32;
inline constexpr std::size_t kGrantBodyHeader = 8;
inline constexpr std::size_t kMaxGrantsPerMessage =
    (kRdmaMaxMessage - kRdmaHeaderSize - kGrantBodyHeader) / kGrantEntrySize;  // 15
inline constexpr std::size_t kMaxStatusText = 200;
// A sink never has more of its blocks granted and not yet filled than this
// (rftp's pools hold at most 1024 blocks), so a source holds no more
// grants waiting for a block of its own.
inline constexpr std::size_t kMaxGrantsOutstanding = 1024;
// Statuses are 0 or a negative errno; anything else is malformed.
inline constexpr int32_t kMinStatus = -4095;

// The status an abort carries for a failure with this code. The wire carries
// errnos only (a peer refuses anything below kMinStatus): rftp's own codes,
// such as kFileChanged, and a plain failure's -1 (which would read as EPERM)
// go as EIO, and the abort's text says what happened.
inline constexpr int32_t abort_status(int code) { return code < -1 && code >= kMinStatus ? code : -EIO; }

enum class RdmaMessageType : uint8_t {
    credit = 1,      // only returns receive credits
    file_begin = 2,  // source -> sink: a file's range [start, size) follows
    grant = 3,       // sink -> source: write these file ranges into these blocks
    block_done = 4,  // source -> sink, on a data QP: a granted block is filled
    file_done = 5,   // sink -> source: every byte is written (or why not)
    abort = 6,       // either way: stop this file now
    grant_ahead = 7, // sink -> source: whole blocks for the next file, before its file_begin
};

const char *to_string(RdmaMessageType type);

// One block the sink lends the source: bytes [offset, offset+length) of the
// file go to remote memory [addr, addr+length) under rkey. slot names the
// sink's block; it comes back in the notice.
struct Grant {
    uint32_t slot = 0;
    uint32_t length = 0;
    uint64_t offset = 0;
    uint64_t addr = 0;
    uint32_t rkey = 0;
};

struct RdmaMessage {
    RdmaMessageType type = RdmaMessageType::credit;
    uint16_t credits = 0;  // control receives the sender re-posted since its last message
    uint32_t file_id = 0;  // which transfer of the channel this is about (0: none)

    // file_begin
    uint64_t start = 0;
    uint64_t size = 0;
    // grant, grant_ahead
    std::array<Grant, kMaxGrantsPerMessage> grants{};
    uint16_t grant_count = 0;
    // block_done
    uint32_t slot = 0;
    uint32_t length = 0;
    // file_done, abort: 0 or a negative errno, bytes written, and why (printable ASCII)
    int32_t status = 0;
    uint64_t bytes = 0;
    std::string text;
};

// A message's header fields as key=value words, for log lines.
std::string header_fields(const RdmaMessage &msg);

// Writes msg into out (at least kRdmaMaxMessage bytes); returns its length.
// The text is cut to kMaxStatusText and control bytes become '?'.
std::size_t encode(const RdmaMessage &msg, std::span<uint8_t> out);

// Parses and checks one received message: magic, version, a known type,
// the exact length its type needs, zero reserved fields, 1..15 grants,
// printable text. Anything else is an error naming what was wrong.
Result<RdmaMessage> decode(std::span<const uint8_t> bytes);

}  // namespace rftp::wire
