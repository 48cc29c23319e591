// A channel's first failure. Once tripped, the channel is unusable for good:
// blocks may still be in flight, so the peers set up a new channel rather
// than risk a late WRITE landing in a block granted for the next file.
// Any thread; tripped() needs no lock, so a daemon's event loop can ask
// (STAT) while a completion handler is busy.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>

#include "common/result.h"

namespace rftp::middleware::rdma {

class FailureLatch {
public:
    // Records e if nothing failed before; returns whether this was the first failure.
    bool trip(const Error &e) {
        std::lock_guard lock(mutex_);
        if (error_) return false;
        error_ = e;
        tripped_ = true;
        return true;
    }
    bool tripped() const { return tripped_.load(); }
    // The first failure, if any.
    std::optional<Error> error() const {
        std::lock_guard lock(mutex_);
        return error_;
    }

private:
    mutable std::mutex mutex_;
    std::optional<Error> error_;
    std::atomic<bool> tripped_{false};
};

}  // namespace rftp::middleware::rdma
