// A framed block sent from the page cache with sendfile(2), as vsftpd sends
// a file: the bytes are neither copied into the stream's buffers nor into
// the socket. send_parallel sends a file this way where its bytes are read
// from the page cache anyway: a file on tmpfs (whose O_DIRECT is a copy
// from memory) or one read buffered (direct I/O off or refused). Elsewhere
// the disk engine's O_DIRECT reads keep a real disk busy at queue depth
// and leave the page cache alone, so blocks go through the buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "common/result.h"
#include "middleware/disk/disk_file.h"
#include "middleware/tcp/block_layout.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware {

// Whether file's bytes are read from the page cache anyway: a regular file
// on tmpfs or ramfs, or one read buffered.
bool bytes_are_in_page_cache(const disk::DiskFile &file);

class PageCacheBlocks {
public:
    explicit PageCacheBlocks(disk::DiskFile &file) : file_(file) {}

    // Sends the block's payload; returns its CRC32C (0 without checksums),
    // for the trailer that follows it.
    Result<uint32_t> send(int sock, BlockRange block, bool checksums, const TransferProgress &progress);

private:
    Result<uint32_t> checksum(BlockRange block);

    disk::DiskFile &file_;
    std::vector<uint8_t> piece_;
};

}  // namespace rftp::middleware
