#include "middleware/resume_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

namespace rftp::middleware {

Result<ResumeJournal> ResumeJournal::create(const std::string &path, uint64_t start) {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd) return fail_errno("create resume journal " + path);
    return create(std::move(fd), start);
}

Result<ResumeJournal> ResumeJournal::create(UniqueFd fd, uint64_t start) {
    ResumeJournal j(std::move(fd));
    std::string text = std::to_string(start) + "\n";
    if (::pwrite(j.fd_.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
        return fail_errno("write resume journal");
    j.recorded_ = start;
    return j;
}

void ResumeJournal::record(uint64_t prefix) {
    std::lock_guard lock(mutex_);
    if (prefix <= recorded_) return;
    // Fixed-width so a shorter number never leaves digits of a longer one behind;
    // a single small pwrite is not torn by a process crash.
    char text[24];
    auto [end, ec] = std::to_chars(text, text + 20, prefix);
    while (end < text + 20) *end++ = ' ';
    *end++ = '\n';
    if (::pwrite(fd_.get(), text, static_cast<std::size_t>(end - text), 0) == end - text) recorded_ = prefix;
}

std::optional<uint64_t> read_resume_journal(const std::string &path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    return read_resume_journal(fd.get());
}

uint64_t read_resume_journal(int fd) {
    char text[32] = {};
    ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    uint64_t value = 0;
    if (n <= 0) return 0;
    auto [p, ec] = std::from_chars(text, text + n, value);
    if (ec != std::errc() || p == text) return 0;
    return value;
}

}  // namespace rftp::middleware
