// The sentence that says a block failed its CRC32C check, as every
// transport writes it (parallel TCP streams and the RDMA channel) into an
// error, an FTP reply and the logs.
#pragma once

#include <cstdint>
#include <string>

namespace rftp::ftp {

// "the block at byte N (L bytes) failed its CRC32C check[ K times; giving
// up]; data is being damaged between the two hosts (...)".
std::string checksum_failure_text(uint64_t offset, uint64_t length, unsigned attempts = 1);

}  // namespace rftp::ftp
