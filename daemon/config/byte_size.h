// Byte counts as people write them in config files: "65536", "64K", "64M",
// "1G" (binary multiples: K = 1024). Optionally followed by "iB" or "B"
// ("64MiB", "64MB" both mean 64 * 2^20), because admins write all three.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace rftp::daemon {

// nullopt when text is not such a size or does not fit in 64 bits.
std::optional<uint64_t> parse_byte_size(std::string_view text);

}  // namespace rftp::daemon
