#include "client/password_prompt.h"

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

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

std::optional<std::string> prompt_password(const std::string &prompt) {
    UniqueFd tty(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (!tty || !::isatty(tty.get())) return std::nullopt;
    if (::write(tty.get(), prompt.data(), prompt.size()) < 0) return std::nullopt;
    EchoOff echo_off(tty.get());
    std::string password;
    char c;
    for (;;) {
        ssize_t n = ::read(tty.get(), &c, 1);
        if (n <= 0) return password.empty() && n < 0 ? std::nullopt : std::optional<std::string>(password);
        if (c == '\n' || c == '\r') break;
        password += c;
    }
    return password;
}

}  // namespace rftp::client
