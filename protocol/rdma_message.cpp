#include "protocol/rdma_message.h"

#include <algorithm>

#include "protocol/big_endian.h"

namespace rftp::wire {
namespace {

constexpr std::size_t kFileBeginSize = kRdmaHeaderSize + 16;
constexpr std::size_t kBlockDoneSize = kRdmaHeaderSize + 8;
constexpr std::size_t kStatusFixedSize = kRdmaHeaderSize + 18;  // status, reserved, bytes, text length

bool is_printable(uint8_t c) { return c >= 0x20 && c < 0x7f; }

std::unexpected<Error> bad(const std::string &what) { return fail_msg("malformed RDMA control message: " + what); }

}  // namespace

const char *to_string(RdmaMessageType type) {
    switch (type) {
        case RdmaMessageType::credit: return "credit";
        case RdmaMessageType::file_begin: return "file_begin";
        case RdmaMessageType::grant: return "grant";
        case RdmaMessageType::block_done: return "block_done";
        case RdmaMessageType::file_done: return "file_done";
        case RdmaMessageType::abort: return "abort";
        case RdmaMessageType::grant_ahead: return "grant_ahead";
    }
    return "unknown";
}

std::string header_fields(const RdmaMessage &m) {
    return std::string("type=") + to_string(m.type) + " file=" + std::to_string(m.file_id) +
           " credits=" + std::to_string(m.credits) + " grants=" + std::to_string(m.grant_count);
}

std::size_t encode(const RdmaMessage &m, std::span<uint8_t> out) {
    uint8_t *p = out.data();
    std::size_t len = kRdmaHeaderSize;
    switch (m.type) {
        case RdmaMessageType::credit: break;
        case RdmaMessageType::file_begin:
            put_be<uint64_t>(p + 16, m.start);
            put_be<uint64_t>(p + 24, m.size);
            len = kFileBeginSize;
            break;
        case RdmaMessageType::grant:
        case RdmaMessageType::grant_ahead: {
            std::size_t n = std::min<std::size_t>(m.grant_count, kMaxGrantsPerMessage);
            put_be<uint16_t>(p + 16, static_cast<uint16_t>(n));
            put_be<uint16_t>(p + 18, 0);
            put_be<uint32_t>(p + 20, 0);
            for (std::size_t i = 0; i < n; ++i) {
                uint8_t *e = p + kRdmaHeaderSize + kGrantBodyHeader + i * kGrantEntrySize;
                const Grant &g = m.grants[i];
                put_be<uint32_t>(e, g.slot);
                put_be<uint32_t>(e + 4, g.length);
                put_be<uint64_t>(e + 8, g.offset);
                put_be<uint64_t>(e + 16, g.addr);
                put_be<uint32_t>(e + 24, g.rkey);
                put_be<uint32_t>(e + 28, 0);
            }
            len = kRdmaHeaderSize + kGrantBodyHeader + n * kGrantEntrySize;
            break;
        }
        case RdmaMessageType::block_done:
            put_be<uint32_t>(p + 16, m.slot);
            put_be<uint32_t>(p + 20, m.length);
            len = kBlockDoneSize;
            break;
        case RdmaMessageType::file_done:
        case RdmaMessageType::abort: {
            std::size_t n = std::min(m.text.size(), kMaxStatusText);
            put_be<uint32_t>(p + 16, static_cast<uint32_t>(m.status));
            put_be<uint32_t>(p + 20, 0);
            put_be<uint64_t>(p + 24, m.bytes);
            put_be<uint16_t>(p + 32, static_cast<uint16_t>(n));
            for (std::size_t i = 0; i < n; ++i) {
                auto c = static_cast<uint8_t>(m.text[i]);
                p[kStatusFixedSize + i] = is_printable(c) ? c : '?';
            }
            len = kStatusFixedSize + n;
            break;
        }
    }
    put_be<uint16_t>(p, kRdmaMagic);
    p[2] = kRdmaVersion;
    p[3] = static_cast<uint8_t>(m.type);
    put_be<uint16_t>(p + 4, static_cast<uint16_t>(len));
    put_be<uint16_t>(p + 6, m.credits);
    put_be<uint32_t>(p + 8, m.file_id);
    put_be<uint32_t>(p + 12, 0);
    return len;
}

Result<RdmaMessage> decode(std::span<const uint8_t> bytes) {
    const uint8_t *p = bytes.data();
    std::size_t n = bytes.size();
    if (n < kRdmaHeaderSize) return bad(std::to_string(n) + " bytes, shorter than a header");
    if (n > kRdmaMaxMessage) return bad(std::to_string(n) + " bytes, longer than any message");
    if (get_be<uint16_t>(p) != kRdmaMagic) return bad("wrong magic");
    if (p[2] != kRdmaVersion)
        return bad("version " + std::to_string(p[2]) + ", this peer speaks " + std::to_string(kRdmaVersion));
    if (get_be<uint16_t>(p + 4) != n)
        return bad("header says " + std::to_string(get_be<uint16_t>(p + 4)) + " bytes, " + std::to_string(n) + " arrived");
    if (get_be<uint32_t>(p + 12) != 0) return bad("reserved header field is not zero");

    RdmaMessage m;
    m.credits = get_be<uint16_t>(p + 6);
    m.file_id = get_be<uint32_t>(p + 8);
    uint8_t type = p[3];
    auto expect_len = [&](std::size_t want) -> Status {
        if (n != want) return bad(std::string(to_string(static_cast<RdmaMessageType>(type))) + " of " +
                                  std::to_string(n) + " bytes, expected " + std::to_string(want));
        return {};
    };
    switch (static_cast<RdmaMessageType>(type)) {
        case RdmaMessageType::credit:
            if (auto ok = expect_len(kRdmaHeaderSize); !ok) return fail(ok.error());
            break;
        case RdmaMessageType::file_begin:
            if (auto ok = expect_len(kFileBeginSize); !ok) return fail(ok.error());
            m.start = get_be<uint64_t>(p + 16);
            m.size = get_be<uint64_t>(p + 24);
            if (m.start > m.size) return bad("file_begin with start beyond size");
            break;
        case RdmaMessageType::grant:
        case RdmaMessageType::grant_ahead: {
            if (n < kRdmaHeaderSize + kGrantBodyHeader) return bad("grant without its count");
            uint16_t count = get_be<uint16_t>(p + 16);
            if (count == 0 || count > kMaxGrantsPerMessage)
                return bad("grant of " + std::to_string(count) + " blocks, expected 1.." +
                           std::to_string(kMaxGrantsPerMessage));
            if (get_be<uint16_t>(p + 18) != 0 || get_be<uint32_t>(p + 20) != 0) return bad("reserved grant field is not zero");
            if (auto ok = expect_len(kRdmaHeaderSize + kGrantBodyHeader + count * kGrantEntrySize); !ok) return fail(ok.error());
            m.grant_count = count;
            for (std::size_t i = 0; i < count; ++i) {
                const uint8_t *e = p + kRdmaHeaderSize + kGrantBodyHeader + i * kGrantEntrySize;
                Grant &g = m.grants[i];
                g.slot = get_be<uint32_t>(e);
                g.length = get_be<uint32_t>(e + 4);
                g.offset = get_be<uint64_t>(e + 8);
                g.addr = get_be<uint64_t>(e + 16);
                g.rkey = get_be<uint32_t>(e + 24);
                if (get_be<uint32_t>(e + 28) != 0) return bad("reserved grant entry field is not zero");
                if (g.length == 0) return bad("grant of an empty block");
                if (g.offset + g.length < g.offset) return bad("grant range wraps around");
            }
            break;
        }
        case RdmaMessageType::block_done:
            if (auto ok = expect_len(kBlockDoneSize); !ok) return fail(ok.error());
            m.slot = get_be<uint32_t>(p + 16);
            m.length = get_be<uint32_t>(p + 20);
            break;
        case RdmaMessageType::file_done:
        case RdmaMessageType::abort: {
            if (n < kStatusFixedSize) return bad("status message without its text length");
            m.status = static_cast<int32_t>(get_be<uint32_t>(p + 16));
            if (get_be<uint32_t>(p + 20) != 0) return bad("reserved status field is not zero");
            m.bytes = get_be<uint64_t>(p + 24);
            uint16_t text_len = get_be<uint16_t>(p + 32);
            if (text_len > kMaxStatusText) return bad("status text longer than " + std::to_string(kMaxStatusText));
            if (auto ok = expect_len(kStatusFixedSize + text_len); !ok) return fail(ok.error());
            for (std::size_t i = 0; i < text_len; ++i)
                if (!is_printable(p[kStatusFixedSize + i])) return bad("control byte in status text");
            m.text.assign(reinterpret_cast<const char *>(p + kStatusFixedSize), text_len);
            if (m.status > 0 || m.status < kMinStatus) return bad("status " + std::to_string(m.status) + " is not 0 or a negative errno");
            break;
        }
        default:
            return bad("unknown type " + std::to_string(type));
    }
    m.type = static_cast<RdmaMessageType>(type);
    return m;
}

}  // namespace rftp::wire
