#include "middleware/disk/partial_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rftp::middleware {

std::function<void(uint64_t)> PartialFile::prefix_recorder() {
    return [this](uint64_t prefix) {
        if (journal_) journal_->record(prefix);
    };
}

Status PartialFile::reserve(uint64_t start, uint64_t end, ReservedSize size) const {
    if (end <= start) return {};
    return preallocate(fd_, start, end - start, size);
}

Status PartialFile::stop_checkpoints() { return journal_ ? journal_->finish() : Status{}; }

Status PartialFile::make_durable(Sync sync) {
    if (auto stopped = stop_checkpoints(); !stopped) return stopped;
    const int synced = sync == Sync::none ? 0 : sync == Sync::data ? ::fdatasync(fd_) : ::fsync(fd_);
    if (synced < 0) {
        const int err = errno;
        return fail_msg(std::strerror(err), -err);  // the callers say what was being synced
    }
    forget_journal();
    return {};
}

void PartialFile::forget_journal() {
    journal_.reset();
    if (removal_) removal_(false);
}

void PartialFile::discard() {
    journal_.reset();
    if (removal_) removal_(true);
}

}  // namespace rftp::middleware
