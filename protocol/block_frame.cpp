#include "protocol/block_frame.h"

namespace rftp::ftp {
namespace {

void put_be64(uint8_t *p, uint64_t v) {
    for (int i = 7; i >= 0; --i) {
        p[i] = static_cast<uint8_t>(v & 0xff);
        v >>= 8;
    }
}

uint64_t get_be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
    return v;
}

}  // namespace

std::array<uint8_t, kFrameHeaderSize> encode_frame(const FrameHeader &h) {
    std::array<uint8_t, kFrameHeaderSize> out{};
    out[0] = h.descriptor;
    put_be64(out.data() + 1, h.count);
    put_be64(out.data() + 9, h.offset);
    return out;
}

Result<FrameHeader> decode_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit) {
    FrameHeader h;
    h.descriptor = bytes[0];
    h.count = get_be64(bytes + 1);
    h.offset = get_be64(bytes + 9);
    if (h.descriptor == kFrameEod) {
        if (h.count != 0) return fail_msg("EOD frame with a payload");
        if (h.offset > limit) return fail_msg("EOD frame beyond the allowed file size");
        return h;
    }
    if (h.descriptor != kFrameData) return fail_msg("unknown frame descriptor " + std::to_string(h.descriptor));
    if (h.count == 0 || h.count > max_count)
        return fail_msg("frame length " + std::to_string(h.count) + " outside 1.." + std::to_string(max_count));
    if (h.offset > limit || h.count > limit - h.offset)
        return fail_msg("frame range beyond the allowed file size");
    return h;
}

}  // namespace rftp::ftp
