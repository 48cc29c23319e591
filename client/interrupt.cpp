#include "client/interrupt.h"

#include <signal.h>
#include <sys/socket.h>

#include <array>
#include <atomic>

namespace rftp::client {
namespace {

constexpr std::size_t kMaxWatched = 256;
std::atomic<bool> g_interrupted{false};
std::atomic<middleware::TransferProgress *> g_progress{nullptr};
std::array<std::atomic<int>, kMaxWatched> g_fds;  // -1 = empty slot
std::atomic<std::size_t> g_fd_count{0};

void on_signal(int) {
    g_interrupted.store(true);
    if (auto *p = g_progress.load()) p->abort.store(true);
    std::size_t n = g_fd_count.load();
    for (std::size_t i = 0; i < n && i < kMaxWatched; ++i) {
        int fd = g_fds[i].load();
        if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    }
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

InterruptGuard::InterruptGuard(middleware::TransferProgress &progress, std::span<const int> data_fds) {
    std::size_t n = 0;
    for (int fd : data_fds)
        if (n < kMaxWatched) g_fds[n++].store(fd);
    g_fd_count.store(n);
    g_progress.store(&progress);
    // A signal that arrived just before the guard existed still stops the transfer.
    if (interrupted()) on_signal(SIGINT);
}

InterruptGuard::~InterruptGuard() {
    g_progress.store(nullptr);
    g_fd_count.store(0);
    for (auto &fd : g_fds) fd.store(-1);
}

}  // namespace rftp::client
