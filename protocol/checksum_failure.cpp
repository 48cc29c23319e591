#include "protocol/checksum_failure.h"

namespace rftp::ftp {

namespace {
constexpr std::string_view kBlockAt = "the block at byte ";
constexpr std::string_view kFailed = "failed its CRC32C check";
}  // namespace

std::string checksum_failure_text(uint64_t offset, uint64_t length, unsigned attempts) {
    std::string text = std::string(kBlockAt) + std::to_string(offset) + " (" + std::to_string(length) + " bytes) " +
                       std::string(kFailed);
    if (attempts > 1) text += " " + std::to_string(attempts) + " times; giving up";
    return text + "; data is being damaged between the two hosts (check the NICs, cables and memory)";
}

}  // namespace rftp::ftp
