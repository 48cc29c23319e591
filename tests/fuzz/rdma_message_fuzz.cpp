// What arrives from an RDMA peer before any block does: the private data of
// a connection request, and each control message. A decoded message must
// encode to the very bytes it came from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "protocol/rdma_connect.h"
#include "protocol/rdma_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::span<const uint8_t> bytes(data, size);
    (void)rftp::wire::decode_connect(bytes);
    auto message = rftp::wire::decode(bytes);
    if (!message) return 0;
    std::vector<uint8_t> again(rftp::wire::kRdmaMaxMessage);
    const std::size_t length = rftp::wire::encode(*message, again);
    if (length != size || !std::equal(again.begin(), again.begin() + length, data)) std::abort();
    return 0;
}
