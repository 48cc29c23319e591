// The sentence that says a block failed its CRC32C check. It travels inside
// an FTP reply (a refused framed upload) or an error, and rftp reads the
// block's offset back out of it to resume from there (docs/protocol.md,
// "Parallel streams"). One writer and one reader keep the two in step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rftp::ftp {

// "the block at byte N (L bytes) failed its CRC32C check[ K times; giving
// up]; data is being damaged between the two hosts (...)".
std::string checksum_failure_text(uint64_t offset, uint64_t length, unsigned attempts = 1);

struct ChecksumFailure {
    std::optional<uint64_t> offset;  // empty when the text names no block
};

// Finds that sentence anywhere in text (behind any context or reply code);
// nothing when text reports some other failure.
std::optional<ChecksumFailure> find_checksum_failure(std::string_view text);

}  // namespace rftp::ftp
