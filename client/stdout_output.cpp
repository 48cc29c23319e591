#include "client/stdout_output.h"

#include <atomic>
#include <cerrno>
#include <cstdio>

namespace rftp::client {
namespace {
std::atomic<int> first_error{0};
}  // namespace

void remember_stdout_error(int err) {
    int none = 0;
    first_error.compare_exchange_strong(none, err ? err : EIO);
}

int stdout_error() { return first_error.load(); }

void print_to_stdout(std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) remember_stdout_error(errno);
}

void flush_stdout() {
    if (std::fflush(stdout) != 0) remember_stdout_error(errno);
}

}  // namespace rftp::client
