#include "middleware/tcp/streams_digest.h"

#include <chrono>

#include "common/log.h"

namespace rftp::middleware {

StreamsDigest::StreamsDigest(std::size_t streams, uint64_t copy_budget)
    : returned_(streams), copy_budget_(copy_budget) {}

void StreamsDigest::give(std::size_t stream, uint32_t slot, const uint8_t *data, uint64_t offset, uint32_t length) {
    std::unique_lock lock(mutex_);
    const uint32_t handle = next_handle_++;
    if (given_up_ || !ordered_.add({handle, offset, length})) {
        returned_[stream].push_back(slot);
        return;
    }
    if (!held_.emplace(handle, Held{stream, slot, data, length, {}, false}).second) {
        returned_[stream].push_back(slot);  // ordered_ now names a handle another block holds
        give_up();
        return;
    }
    hash_in_order(lock);
}

// Whoever gave the block that continues the digest hashes everything that
// now continues it, outside the lock; the one claim at a time keeps the
// bytes in order (ordered_digest.h).
void StreamsDigest::hash_in_order(std::unique_lock<std::mutex> &lock) {
    while (!given_up_) {
        std::vector<OrderedDigest::Piece> claimed = ordered_.claim();
        if (claimed.empty()) return;
        hashing_ = true;
        std::vector<const Held *> pieces;
        for (const auto &p : claimed) {
            Held &h = held_.at(p.block);
            h.hashing = true;
            pieces.push_back(&h);  // map nodes stay put while others come and go
        }
        lock.unlock();
        for (const Held *h : pieces) ordered_.update(h->bytes(), h->length);
        lock.lock();
        ordered_.release(claimed);
        hashing_ = false;
        for (const auto &p : claimed) let_go(held_.find(p.block));
        changed_.notify_all();
    }
}

void StreamsDigest::let_go(std::map<uint32_t, Held>::iterator it) {
    if (it->second.copy.empty()) returned_[it->second.stream].push_back(it->second.slot);
    else copied_ -= it->second.length;
    held_.erase(it);
}

// Every buffer not being hashed goes back now; the ones being hashed go
// back when that ends. The bytes hashed so far are of no more use.
void StreamsDigest::give_up() {
    if (!given_up_) log::debug("the SHA-256 taken across the streams is given up: it will be read from the file");
    given_up_ = true;
    for (auto it = held_.begin(); it != held_.end();) {
        auto next = std::next(it);
        if (!it->second.hashing) let_go(it);
        it = next;
    }
    changed_.notify_all();
}

bool StreamsDigest::holds_any_of(std::size_t stream) const {
    for (const auto &[handle, h] : held_)
        if (h.stream == stream && h.copy.empty()) return true;
    return false;
}

void StreamsDigest::collect_returned(std::size_t stream, std::vector<uint32_t> &into) {
    into.insert(into.end(), returned_[stream].begin(), returned_[stream].end());
    returned_[stream].clear();
}

std::vector<uint32_t> StreamsDigest::take_back(std::size_t stream) {
    std::lock_guard lock(mutex_);
    std::vector<uint32_t> back;
    collect_returned(stream, back);
    return back;
}

std::vector<uint32_t> StreamsDigest::reclaim(std::size_t stream, bool patient) {
    std::unique_lock lock(mutex_);
    std::vector<uint32_t> back;
    bool waited = false;
    for (;;) {
        collect_returned(stream, back);
        if (!back.empty()) return back;
        // While a stream hashes, the digest moves and will let buffers go:
        // waiting for that costs no copy and cannot stall (hashing waits for
        // nothing). So does a short wait for the block the digest needs
        // next, which is mostly on its way; only then is a buffer copied.
        if (patient && hashing_) {
            changed_.wait(lock);
            continue;
        }
        if (patient && !waited) {
            waited = true;
            changed_.wait_for(lock, kPatience);
            continue;
        }
        // The block given last is likely the furthest from its turn.
        auto it = held_.rbegin();
        while (it != held_.rend() && (it->second.stream != stream || !it->second.copy.empty())) ++it;
        if (it == held_.rend()) return back;
        Held &h = it->second;
        if (h.hashing) {
            changed_.wait(lock);
        } else if (copied_ + h.length > copy_budget_) {
            give_up();
        } else {
            h.copy.assign(h.data, h.data + h.length);
            copied_ += h.length;
            back.push_back(h.slot);
            return back;
        }
    }
}

std::vector<uint32_t> StreamsDigest::finish_stream(std::size_t stream, bool failed, const std::atomic<bool> &stopped) {
    std::unique_lock lock(mutex_);
    ++streams_done_;
    changed_.notify_all();
    std::vector<uint32_t> back;
    for (;;) {
        collect_returned(stream, back);
        if (!holds_any_of(stream)) return back;
        if (!given_up_ && (failed || stopped.load() || streams_done_ == returned_.size())) {
            give_up();
            continue;
        }
        // The others still sending, or one of its blocks being hashed; a stop
        // from outside says nothing here, so look again soon.
        changed_.wait_for(lock, std::chrono::milliseconds(50));
    }
}

std::optional<std::string> StreamsDigest::finish(uint64_t size) {
    std::lock_guard lock(mutex_);
    if (given_up_) return std::nullopt;
    return ordered_.finish(size);
}

}  // namespace rftp::middleware
