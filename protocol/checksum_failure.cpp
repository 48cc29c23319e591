#include "protocol/checksum_failure.h"

#include <charconv>

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

std::optional<ChecksumFailure> find_checksum_failure(std::string_view text) {
    std::size_t failed = text.find(kFailed);
    if (failed == std::string_view::npos) return std::nullopt;
    ChecksumFailure found;
    std::size_t at = text.rfind(kBlockAt, failed);
    if (at == std::string_view::npos) return found;
    uint64_t offset = 0;
    const char *first = text.data() + at + kBlockAt.size();
    auto [end, ec] = std::from_chars(first, text.data() + failed, offset);
    if (ec == std::errc() && end != first && *end == ' ') found.offset = offset;
    return found;
}

}  // namespace rftp::ftp
