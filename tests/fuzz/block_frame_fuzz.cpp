// A frame header on a parallel data connection, as a receiver and as a
// sender read one, against limits taken from the input itself.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "protocol/block_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < rftp::ftp::kFrameHeaderSize + 16) return 0;
    uint64_t max_count = 0, limit = 0;
    std::memcpy(&max_count, data + rftp::ftp::kFrameHeaderSize, 8);
    std::memcpy(&limit, data + rftp::ftp::kFrameHeaderSize + 8, 8);
    (void)rftp::ftp::decode_frame(data, max_count, limit);
    (void)rftp::ftp::decode_receiver_frame(data, max_count, limit);
    return 0;
}
