// Shared between the threads that move a file's bytes and whoever watches
// them (the progress display, the daemon's transfer log, ABOR).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace rftp::middleware {

struct TransferProgress {
    std::atomic<uint64_t> bytes{0};   // payload bytes moved so far by all streams
    std::atomic<bool> abort{false};   // set to stop every stream at the next chance
    // Blocks that failed their CRC32C on the way and were sent again: the
    // sender counts what it sent again, the receiver what it asked for.
    std::atomic<uint64_t> blocks_resent{0};
    // How the disk engine read or wrote the file (disk::DiskFile::summary():
    // direct and buffered bytes, and why any went buffered). Set once by the
    // mover as it returns, for the transfer log; empty where no file was involved.
    std::string disk_summary;
};

}  // namespace rftp::middleware
