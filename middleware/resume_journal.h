// Blocks of a parallel transfer land out of order, so after a crash the size
// of a partial file says nothing about which of its bytes are good. The
// journal, a tiny file beside it, records the length of the prefix known to
// be complete; a resume starts there. Written only after the bytes it vouches
// for, so it may lag behind the file but never run ahead of it.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"

namespace rftp::middleware {

class ResumeJournal {
public:
    // Creates (or truncates) the journal at path and records start.
    static Result<ResumeJournal> create(const std::string &path, uint64_t start);
    // The same on a journal file already opened for writing (and truncated).
    static Result<ResumeJournal> create(UniqueFd fd, uint64_t start);

    ResumeJournal(ResumeJournal &&other) noexcept : fd_(std::move(other.fd_)), recorded_(other.recorded_) {}

    // Records a longer complete prefix; shorter or equal values are ignored.
    // Safe from several threads.
    void record(uint64_t prefix);

private:
    explicit ResumeJournal(UniqueFd fd) : fd_(std::move(fd)) {}
    UniqueFd fd_;
    std::mutex mutex_;
    uint64_t recorded_ = 0;
};

// The prefix recorded at path; nullopt when there is no journal. A journal
// that cannot be read as a number counts as a prefix of 0: start over.
std::optional<uint64_t> read_resume_journal(const std::string &path);
uint64_t read_resume_journal(int fd);

}  // namespace rftp::middleware
