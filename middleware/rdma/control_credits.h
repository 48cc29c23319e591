// Flow control for the control queue pair. A SEND that meets no posted
// receive is fatal on iWARP and costs an RNR retry on InfiniBand/RoCE, so a
// side only sends while it holds a credit: one per receive the peer has
// posted for it. Both sides post kControlDepth receives at connect, so each
// starts with that many credits. Every message carries the number of receives
// its sender re-posted since its previous message (credits returned).
//
// To never deadlock, the last credit is kept for a credit-only message, and a
// side that owes half the depth sends one whenever nothing else it has can go
// (its queue is empty, or blocked on its own last credit): a side that is out
// of credits is owed at least depth-1 by its peer, which will therefore
// return them, even while its own messages wait. Pure logic; the caller holds
// the lock.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace rftp::middleware::rdma {

class ControlCredits {
public:
    explicit ControlCredits(unsigned depth) : depth_(depth), available_(depth) {}

    // May a message go now? A message with content needs two credits (one is
    // kept back for a credit-only message); a credit-only message needs one.
    bool may_send(bool credit_only) const { return credit_only ? available_ >= 1 : available_ >= 2; }

    // A message is being sent: takes a credit and returns the credits to put in it.
    uint16_t on_send() {
        --available_;
        uint16_t r = static_cast<uint16_t>(owed_);
        owed_ = 0;
        return r;
    }

    // The peer returned credits. More than it could ever owe is a protocol error.
    Status on_returned(uint16_t credits) {
        if (available_ + credits > depth_)
            return fail_msg("peer returned " + std::to_string(credits) + " control credits, holding " +
                            std::to_string(available_) + " of " + std::to_string(depth_));
        available_ += credits;
        return {};
    }

    // We re-posted one receive for the peer: a credit we owe it.
    void on_reposted() { ++owed_; }

    // Nothing else can go now: should a credit-only message go?
    bool should_return_credits() const { return owed_ >= depth_ / 2 && owed_ > 0; }

    unsigned available() const { return available_; }
    unsigned owed() const { return owed_; }

private:
    unsigned depth_;
    unsigned available_;
    unsigned owed_ = 0;
};

}  // namespace rftp::middleware::rdma
