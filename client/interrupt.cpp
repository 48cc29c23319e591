#include "client/interrupt.h"

#include <signal.h>
#include <sys/socket.h>

#include <array>
#include <atomic>

namespace rftp::client {
namespace {

// Several transfers may run at once (one per session thread with -j), so
// each guard claims its own slots. Slots are claimed with compare-and-swap
// and read by the handler with plain atomic loads: nothing here locks, so the
// handler stays async-signal-safe.
constexpr std::size_t kMaxTransfers = 128;
constexpr std::size_t kMaxWatchedFds = 4096;
std::atomic<bool> g_interrupted{false};
std::atomic<int> g_signal{0};  // the first signal that interrupted the run
std::array<std::atomic<middleware::TransferProgress *>, kMaxTransfers> g_progress{};
std::array<std::atomic<int>, kMaxWatchedFds> g_fds;  // -1 = free slot

void stop_everything() {
    for (auto &slot : g_progress)
        if (auto *p = slot.load()) p->abort.store(true);
    for (auto &slot : g_fds) {
        int fd = slot.load();
        if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }
}

void on_signal(int sig) {
    int none = 0;
    g_signal.compare_exchange_strong(none, sig);
    g_interrupted.store(true);
    stop_everything();
}

}  // namespace

void install_interrupt_handlers() {
    for (auto &fd : g_fds) fd.store(-1);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking calls return EINTR and notice
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    // A closed data connection must be an error value, not a silent death.
    ::signal(SIGPIPE, SIG_IGN);
}

bool interrupted() { return g_interrupted.load(); }
const std::atomic<bool> &interrupt_flag() { return g_interrupted; }

void die_of_the_interrupting_signal() {
    const int sig = g_signal.load();
    if (sig == 0) return;
    struct sigaction sa {};
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
    sigset_t just_this;
    sigemptyset(&just_this);
    sigaddset(&just_this, sig);
    ::sigprocmask(SIG_UNBLOCK, &just_this, nullptr);
    ::raise(sig);
}

InterruptGuard::InterruptGuard(middleware::TransferProgress &progress, std::span<const int> data_fds) {
    for (std::size_t i = 0; i < kMaxTransfers; ++i) {
        middleware::TransferProgress *expected = nullptr;
        if (g_progress[i].compare_exchange_strong(expected, &progress)) {
            progress_slot_ = i;
            break;
        }
    }
    for (int fd : data_fds) {
        for (std::size_t i = 0; i < kMaxWatchedFds; ++i) {
            int expected = -1;
            if (g_fds[i].compare_exchange_strong(expected, fd)) {
                fd_slots_.push_back(i);
                break;
            }
        }
    }
    // A signal that arrived just before the guard existed still stops the transfer.
    if (interrupted()) {
        progress.abort.store(true);
        for (int fd : data_fds) ::shutdown(fd, SHUT_RDWR);
    }
}

InterruptGuard::~InterruptGuard() {
    if (progress_slot_ < kMaxTransfers) g_progress[progress_slot_].store(nullptr);
    for (std::size_t i : fd_slots_) g_fds[i].store(-1);
}

}  // namespace rftp::client
