// A whole-file SHA-256 taken while a file's blocks cross N parallel TCP
// streams (parallel_transfer.h), so --verify and HASH need no second pass
// over the file. Each stream gives the digest a block once its bytes are
// final: the sender once it is read (and sent), the receiver once its
// CRC32C checked. A block ahead of the digest stays in its stream's buffer,
// not copied, until every byte before it is hashed, by whichever stream's
// block completes that prefix; the stream then takes the buffer back.
//
// A stream that needs a buffer back waits while the digest moves (a stream
// is hashing), but never long for a block that has not come: that block
// may be the one another stream's buffers wait for, so waiting could stall
// the transfer. It takes the buffer back instead, its bytes copied into the
// digest's own memory, up to a budget. Past the budget the digest gives up,
// lets every buffer go, and the file is read again for its digest, as
// without it. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "middleware/integrity/ordered_digest.h"

namespace rftp::middleware {

class StreamsDigest {
public:
    // Copies above copy_budget bytes at once give the digest up.
    StreamsDigest(std::size_t streams, uint64_t copy_budget);

    // Stream's buffer slot holds the file's bytes [offset, offset + length)
    // at data: the digest has it until take_back() hands it back (at once
    // for bytes hashed already, a block sent again).
    void give(std::size_t stream, uint32_t slot, const uint8_t *data, uint64_t offset, uint32_t length);

    // Stream's buffers the digest is done with since the last call.
    std::vector<uint32_t> take_back(std::size_t stream);

    // At least one of stream's buffers back now (none only if the digest
    // holds none), without waiting for its turn: copied, or the digest given
    // up. Waits while another stream is hashing one of them. Patient, it
    // also waits while the digest moves and briefly for the block it needs
    // next, before a copy. Not patient where that block can only come on
    // this very stream (a damaged block it awaits again): waiting would only
    // add the delay.
    std::vector<uint32_t> reclaim(std::size_t stream, bool patient = true);

    // A stream that is done: waits until the digest holds none of its
    // buffers, then hands them back. Gives the digest up instead when
    // stopped is set, or when every other stream is done too (what it waits
    // for can no longer come).
    // failed: this stream ends in failure, so the transfer does too.
    std::vector<uint32_t> finish_stream(std::size_t stream, bool failed, const std::atomic<bool> &stopped);

    // The hex digest once bytes [0, size) are in it; nullopt otherwise (given up).
    std::optional<std::string> finish(uint64_t size);

private:
    struct Held {
        std::size_t stream = 0;
        uint32_t slot = 0;
        const uint8_t *data = nullptr;  // in the stream's buffer
        uint32_t length = 0;
        std::vector<uint8_t> copy;      // the bytes, once the buffer went back
        bool hashing = false;
        const uint8_t *bytes() const { return copy.empty() ? data : copy.data(); }
    };
    // How long a stream that needs a buffer back waits for the digest to
    // move before it copies one.
    static constexpr std::chrono::milliseconds kPatience{20};
    void hash_in_order(std::unique_lock<std::mutex> &lock);
    void let_go(std::map<uint32_t, Held>::iterator it);
    void give_up();
    bool holds_any_of(std::size_t stream) const;
    void collect_returned(std::size_t stream, std::vector<uint32_t> &into);

    std::mutex mutex_;
    std::condition_variable changed_;
    OrderedDigest ordered_;
    std::map<uint32_t, Held> held_;  // by the handle OrderedDigest knows them by
    uint32_t next_handle_ = 0;  // wraps only after 2^32 blocks; a clash gives the digest up
    std::vector<std::vector<uint32_t>> returned_;  // per stream
    std::size_t streams_done_ = 0;
    bool hashing_ = false;  // a stream is hashing claimed blocks now
    uint64_t copy_budget_;
    uint64_t copied_ = 0;
    bool given_up_ = false;
};

}  // namespace rftp::middleware
