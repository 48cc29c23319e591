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

namespace {

FrameHeader read_header(const uint8_t *bytes) {
    return {bytes[0], get_be<uint64_t>(bytes + 1), get_be<uint64_t>(bytes + 9)};
}

Status check_range(const FrameHeader &h, uint64_t max_count, uint64_t limit) {
    if (h.count == 0 || h.count > max_count)
        return fail_msg("frame length " + std::to_string(h.count) + " outside 1.." + std::to_string(max_count));
    if (h.offset > limit || h.count > limit - h.offset) return fail_msg("frame range beyond the allowed file size");
    return {};
}

Status check_eod(const FrameHeader &h, uint64_t limit) {
    if (h.count != 0) return fail_msg("EOD frame with a payload");
    if (h.offset > limit) return fail_msg("EOD frame beyond the allowed file size");
    return {};
}

}  // namespace

Result<FrameHeader> decode_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit) {
    FrameHeader h = read_header(bytes);
    if (h.descriptor == kFrameEod || h.descriptor == kFrameEodUnechoed) {
        if (auto ok = check_eod(h, limit); !ok) return fail(ok.error());
        return h;
    }
    if (h.descriptor != kFrameData) return fail_msg("unknown frame descriptor " + std::to_string(h.descriptor));
    if (auto ok = check_range(h, max_count, limit); !ok) return fail(ok.error());
    return h;
}

Result<FrameHeader> decode_receiver_frame(const uint8_t *bytes, uint64_t max_count, uint64_t limit) {
    FrameHeader h = read_header(bytes);
    if (h.descriptor == kFrameEod) {
        if (auto ok = check_eod(h, limit); !ok) return fail(ok.error().with_context("the receiver's EOD"));
        return h;
    }
    if (h.descriptor != kFrameResend)
        return fail_msg("unexpected frame descriptor " + std::to_string(h.descriptor) + " from the receiver");
    if (auto ok = check_range(h, max_count, limit); !ok) return fail(ok.error().with_context("resend request"));
    return h;
}

}  // namespace rftp::ftp
