// "8M", "512k", "1G", "65536", "4MiB": binary multiples, as dd and lftp read them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::client {

Result<uint64_t> parse_byte_size(std::string_view text);

// The other way: "8M", "512K", or plain bytes, as parse_byte_size reads them.
std::string byte_size_text(uint64_t bytes);

}  // namespace rftp::client
