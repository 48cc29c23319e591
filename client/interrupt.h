// SIGINT/SIGTERM handling. The handler only does async-signal-safe work: it
// records the signal, sets the abort flag of the running transfer and shuts
// down its data sockets, which wakes every thread blocked in them. The main
// flow then sees the failed transfer, sends ABOR and exits 130. Up to 128
// transfers may be guarded at once (one per session thread with -j).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "middleware/transfer_progress.h"

namespace rftp::client {

void install_interrupt_handlers();
bool interrupted();

// While alive, an interrupt aborts this transfer and shuts down these sockets.
class InterruptGuard {
public:
    InterruptGuard(middleware::TransferProgress &progress, std::span<const int> data_fds);
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard &) = delete;
    InterruptGuard &operator=(const InterruptGuard &) = delete;

private:
    std::size_t progress_slot_ = SIZE_MAX;  // SIZE_MAX: no slot was free
    std::vector<std::size_t> fd_slots_;
};

}  // namespace rftp::client
