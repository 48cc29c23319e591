// Byte counts as people write and read them, one rule for the daemon's
// config and the client's options alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rftp {

// "65536", "512K", "8M", "1G": binary multiples (K = 1024), either case,
// optionally followed by "B" or "iB" ("512B", "64MB", "64MiB" all read as
// admins and dd users mean them). nullopt when the text is not such a size
// or the size does not fit in 64 bits.
std::optional<uint64_t> parse_byte_size(std::string_view text);

// The other way, exactly: "8M", "512K", or plain bytes.
std::string byte_size_text(uint64_t bytes);

// For people: "512 bytes", "64 MiB", "1.5 GiB" (one decimal unless whole).
std::string human_bytes(double bytes);

}  // namespace rftp
