// SIGINT/SIGTERM handling. The handler only does async-signal-safe work: it
// records the signal, sets the abort flag of the running transfer and shuts
// down its data sockets, which wakes every thread blocked in them. The main
// flow then sees the failed transfer, sends ABOR and exits 130. Up to 128
// transfers may be guarded at once (one per session thread with -j).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "middleware/transfer_progress.h"

namespace rftp::client {

void install_interrupt_handlers();
bool interrupted();
// The flag itself, for waits that poll a cancel flag (TLS handshakes).
const std::atomic<bool> &interrupt_flag();

// Once everything is cleaned up and reported: dies of the signal that
// interrupted the run (SIGINT or SIGTERM), with its default action. A shell
// running rftp in a loop stops at Ctrl-C only when its child died of SIGINT;
// a plain exit 130 tells it the child handled the signal, and the loop goes
// on (https://www.cons.org/cracauer/sigint.html). Shells then report 130 or
// 143. Returns only when no signal interrupted the run.
void die_of_the_interrupting_signal();

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
