// Shared between the threads that move a file's bytes and whoever watches
// them (the progress display, the daemon's transfer log, ABOR).
#pragma once

#include <atomic>
#include <cstdint>

namespace rftp::middleware {

struct TransferProgress {
    std::atomic<uint64_t> bytes{0};   // payload bytes moved so far by all streams
    std::atomic<bool> abort{false};   // set to stop every stream at the next chance
};

}  // namespace rftp::middleware
