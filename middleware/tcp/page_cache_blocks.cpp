#include "middleware/tcp/page_cache_blocks.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "middleware/integrity/block_checksum.h"
#include "middleware/tcp/socket_io.h"

namespace rftp::middleware {
namespace {

// The CRC is taken from a read of the block in pieces that stay in the
// CPU's cache: reading a piece and checksumming it costs about what
// checksumming a mapping of it does, and a read cannot fault (a mapping of
// a file that shrinks under it raises SIGBUS).
constexpr std::size_t kChecksumPiece = 256u << 10;

}  // namespace

bool bytes_are_in_page_cache(const disk::DiskFile &file) {
    if (!file.regular || !file.seekable) return false;
    return !file.direct_usable.load() || disk::in_memory_file_system(file.fd);
}

// The kernel sends from the page cache when the socket is ready, and TCP
// sends again from it when a segment is lost. A file changed meanwhile
// reaches the receiver with a CRC that does not match, and the receiver
// asks for the block again (block_resends.h), as for damage on the wire.
Result<uint32_t> PageCacheBlocks::send(int sock, BlockRange block, bool checksums, const TransferProgress &progress) {
    uint32_t crc = 0;
    if (checksums) {
        auto taken = checksum(block);
        if (!taken) return fail(taken.error());
        // Test-only: sendfile cannot damage the bytes, so the trailer is.
        crc = take_fault_flip() && block.length > 0 ? *taken ^ 0x10u : *taken;
    }
    if (auto s = copy_block_to_socket(sock, file_.fd, block.offset, block.length, progress); !s) return fail(s.error());
    file_.buffered_bytes.fetch_add(block.length, std::memory_order_relaxed);
    file_.sendfile_bytes.fetch_add(block.length, std::memory_order_relaxed);
    return crc;
}

Result<uint32_t> PageCacheBlocks::checksum(BlockRange block) {
    piece_.resize(std::min<std::size_t>(kChecksumPiece, block.length));
    Crc32cRunning crc;
    for (uint64_t at = block.offset, end = block.offset + block.length; at < end;) {
        const std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(piece_.size(), end - at));
        const ssize_t n = ::pread(file_.fd, piece_.data(), want, static_cast<off_t>(at));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_errno("read from file");
        if (n == 0) return fail(file_ended_early(at));
        crc.add({piece_.data(), static_cast<std::size_t>(n)});
        at += static_cast<uint64_t>(n);
    }
    return crc.value();
}

}  // namespace rftp::middleware
