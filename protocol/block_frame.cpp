#include "protocol/block_frame.h"

#include "protocol/big_endian.h"

namespace rftp::ftp {

using wire::get_be;
using wire::put_be;

std::array<uint8_t, kFrameHeaderSize> encode_frame(const FrameHeader &h) {
    std::array<uint8_t, kFrameHeaderSize> out{};
    out[0] = h.descriptor;
    put_be<uint64_t>(out.data() + 1, h.count);
    put_be<uint64_t>(out.data() + 9, h.offset);
    return out;
}

Result<FrameHeader> decode_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit) {
    FrameHeader h;
    h.descriptor = bytes[0];
    h.count = get_be<uint64_t>(bytes + 1);
    h.offset = get_be<uint64_t>(bytes + 9);
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
