// A ~/.netrc as rftp reads it, then a lookup in what it held.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "client/netrc.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    auto entries = rftp::client::parse_netrc(std::string_view(reinterpret_cast<const char *>(data), size));
    if (entries) (void)rftp::client::find_netrc_entry(*entries, "example.org", "alice");
    return 0;
}
