#include "client/password_prompt.h"

#include <fcntl.h>
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "client/interrupt.h"
#include "common/unique_fd.h"

namespace rftp::client {
namespace {

// Restores the terminal's echo however the prompt ends.
class EchoOff {
public:
    explicit EchoOff(int fd) : fd_(fd) {
        if (::tcgetattr(fd_, &saved_) == 0) {
            termios quiet = saved_;
            quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
            quiet.c_lflag |= ECHONL;
            active_ = ::tcsetattr(fd_, TCSAFLUSH, &quiet) == 0;
        }
    }
    ~EchoOff() {
        if (active_) ::tcsetattr(fd_, TCSAFLUSH, &saved_);
    }
    EchoOff(const EchoOff &) = delete;
    EchoOff &operator=(const EchoOff &) = delete;

private:
    int fd_;
    termios saved_{};
    bool active_ = false;
};

}  // namespace

Outcome<std::optional<std::string>> prompt_password(const std::string &prompt) {
    UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (!tty || !::isatty(tty.get())) return std::nullopt;
    // Echo goes off before the prompt shows: a password typed (or pasted) as
    // soon as it appears is then neither echoed nor flushed away by the
    // switch, which discards what was typed before it.
    EchoOff echo_off(tty.get());
    if (::write(tty.get(), prompt.data(), prompt.size()) < 0) return std::nullopt;
    std::string password;
    char c;
    for (;;) {
        // The interrupt handler does not restart reads, so Ctrl-C ends one;
        // but a Ctrl-C that comes just before the read would leave it waiting
        // for a key, so the read waits only for input that is there.
        pollfd ready{tty.get(), POLLIN, 0};
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted at the password prompt");
        const int polled = ::poll(&ready, 1, 100);
        if (polled < 0 && errno != EINTR)
            return fail_as(ExitCode::auth, std::string("password prompt: ") + std::strerror(errno));
        if (polled <= 0) continue;  // nothing yet, or a signal: look again
        ssize_t n = ::read(tty.get(), &c, 1);
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted at the password prompt");
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_as(ExitCode::auth, std::string("password prompt: ") + std::strerror(errno));
        if (n == 0) return fail_as(ExitCode::auth, "password prompt ended without a password (end of input)");
        if (c == '\n' || c == '\r') break;
        password += c;
    }
    return password;
}

}  // namespace rftp::client
