// The life of each block of a registered pool, as an explicit state machine.
// A source block goes free -> loading (a reader fills it) -> ready -> posted
// (RDMA WRITE in flight) -> free, or, once per /dev/zero file, free -> zeros
// (held all zeros for the file: every full-length WRITE reads it). A sink
// block goes free -> lending (its grant waits to go out, in a batch) ->
// granted (the grant went out) -> filled (its notice arrived) -> writing
// (checked, then to disk) -> free, or back to lending when its checksum
// failed. Only a granted block takes a notice: a notice for a grant the
// source never received could only be a guess or a replay, and would pass
// off the block's old contents as new. A block granted ahead of a file
// (docs/protocol.md, "Grants ahead") that falls past the file's end goes
// from granted back to free: the source never fills it.
// Every move names the state it expects, so a block can never be in two
// states, and a move from the wrong one is an error the caller reports
// (for a sink block, that means the peer broke the protocol).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace rftp::middleware::rdma {

enum class SourceBlock : uint8_t { free, loading, ready, posted, zeros };
enum class SinkBlock : uint8_t { free, lending, granted, filled, writing };

const char *to_string(SourceBlock s);
const char *to_string(SinkBlock s);

// The legal moves; anything else is refused.
constexpr bool allowed(SourceBlock from, SourceBlock to) {
    return (from == SourceBlock::free && to == SourceBlock::loading) ||
           (from == SourceBlock::loading && to == SourceBlock::ready) ||
           (from == SourceBlock::ready && to == SourceBlock::posted) ||
           (from == SourceBlock::posted && to == SourceBlock::free) ||
           // held for the rest of a /dev/zero file (its states end with the file)
           (from == SourceBlock::free && to == SourceBlock::zeros) ||
           // a block whose load failed goes back unused
           (from == SourceBlock::loading && to == SourceBlock::free);
}
constexpr bool allowed(SinkBlock from, SinkBlock to) {
    return (from == SinkBlock::free && to == SinkBlock::lending) ||
           (from == SinkBlock::lending && to == SinkBlock::granted) ||
           (from == SinkBlock::granted && to == SinkBlock::filled) ||
           (from == SinkBlock::filled && to == SinkBlock::writing) ||
           (from == SinkBlock::writing && to == SinkBlock::free) ||
           // its checksum failed: lent to the source again for the same bytes
           (from == SinkBlock::writing && to == SinkBlock::lending) ||
           // granted ahead, past the end of the file that came
           (from == SinkBlock::granted && to == SinkBlock::free);
}

// Not thread-safe: the engine holds its lock around every call. Free blocks
// sit on a stack, so taking one is O(1).
template <class State>
class BlockStates {
public:
    explicit BlockStates(std::size_t count = 0) : states_(count, State{}) {
        for (std::size_t i = count; i > 0; --i) free_.push_back(static_cast<uint32_t>(i - 1));
    }

    std::size_t size() const { return states_.size(); }
    std::size_t free_count() const { return free_.size(); }
    bool all_free() const { return free_.size() == states_.size(); }
    bool valid(uint64_t index) const { return index < states_.size(); }
    State at(std::size_t index) const { return states_[index]; }

    // Takes the next free block into state `to`; nullopt when none is free.
    std::optional<uint32_t> take_free(State to) {
        if (free_.empty() || !allowed(State{}, to)) return std::nullopt;
        uint32_t i = free_.back();
        free_.pop_back();
        states_[i] = to;
        return i;
    }

    // Takes free block index into state `to` (a block granted ahead, which
    // the new file's states must hold from the start).
    Status take(uint32_t index, State to) {
        // From the back: the low blocks a grant ahead takes sit there.
        auto at = std::find(free_.rbegin(), free_.rend(), index);
        if (at == free_.rend() || !allowed(State{}, to))
            return fail_msg("block " + std::to_string(index) + " is not free to take");
        free_.erase(std::next(at).base());
        states_[index] = to;
        return {};
    }

    // Moves block index from `from` to `to` (neither free-to-something, which
    // is take_free); refuses an index out of range, a block not in `from`, or
    // a move the machine does not have.
    Status move(uint64_t index, State from, State to) {
        if (!valid(index))
            return fail_msg("block " + std::to_string(index) + " does not exist (pool has " +
                            std::to_string(states_.size()) + ")");
        if (from == State{} || !allowed(from, to))
            return fail_msg("block " + std::to_string(index) + ": no move from " + to_string(from) + " to " +
                            to_string(to));
        State &s = states_[index];
        if (s != from)
            return fail_msg("block " + std::to_string(index) + " is " + to_string(s) + ", not " + to_string(from));
        s = to;
        if (to == State{}) free_.push_back(static_cast<uint32_t>(index));
        return {};
    }

private:
    std::vector<State> states_;
    std::vector<uint32_t> free_;
};

}  // namespace rftp::middleware::rdma
