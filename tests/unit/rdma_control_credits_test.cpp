// Credit flow control on the control queue pair (middleware/rdma/control_credits.h):
// the unit rules, then a deterministic two-peer simulation of the contract in
// the header's comment: a side sends only while it holds a credit, content
// needs two (the last is kept for a credit-only message), every message
// carries the receives its sender re-posted, and a side that owes half the
// depth sends a credit-only message when it has nothing else to send.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>

#include "middleware/rdma/control_credits.h"

using rftp::middleware::rdma::ControlCredits;

// ---- the unit rules ---------------------------------------------------------------

TEST(RdmaControlCredits, StartsWithDepthCreditsAndOwesNothing) {
    ControlCredits c(32);
    EXPECT_EQ(c.available(), 32u);
    EXPECT_EQ(c.owed(), 0u);
    EXPECT_TRUE(c.may_send(false));
    EXPECT_TRUE(c.may_send(true));
    EXPECT_FALSE(c.should_return_credits());
}

TEST(RdmaControlCredits, ContentNeedsTwoCreditsCreditOnlyNeedsOne) {
    ControlCredits c(4);
    c.on_send();
    c.on_send();
    EXPECT_EQ(c.available(), 2u);
    EXPECT_TRUE(c.may_send(false));
    c.on_send();
    EXPECT_EQ(c.available(), 1u);
    EXPECT_FALSE(c.may_send(false)) << "the last credit is kept back for a credit-only message";
    EXPECT_TRUE(c.may_send(true));
    c.on_send();
    EXPECT_EQ(c.available(), 0u);
    EXPECT_FALSE(c.may_send(false));
    EXPECT_FALSE(c.may_send(true));
}

TEST(RdmaControlCredits, DepthOneCanOnlyEverSendCreditOnly) {
    ControlCredits c(1);
    EXPECT_FALSE(c.may_send(false));
    EXPECT_TRUE(c.may_send(true));
}

TEST(RdmaControlCredits, OnSendReturnsAndClearsOwedCredits) {
    ControlCredits c(32);
    EXPECT_EQ(c.on_send(), 0u);
    c.on_reposted();
    c.on_reposted();
    c.on_reposted();
    EXPECT_EQ(c.owed(), 3u);
    EXPECT_EQ(c.on_send(), 3u);
    EXPECT_EQ(c.owed(), 0u);
    EXPECT_EQ(c.on_send(), 0u);
    EXPECT_EQ(c.available(), 29u);
    c.on_reposted();
    EXPECT_EQ(c.on_send(), 1u);
}

TEST(RdmaControlCredits, OnReturnedRefillsUpToDepth) {
    ControlCredits c(8);
    for (int i = 0; i < 5; ++i) c.on_send();
    EXPECT_EQ(c.available(), 3u);
    ASSERT_TRUE(c.on_returned(0));
    EXPECT_EQ(c.available(), 3u);
    ASSERT_TRUE(c.on_returned(2));
    EXPECT_EQ(c.available(), 5u);
    ASSERT_TRUE(c.on_returned(3));
    EXPECT_EQ(c.available(), 8u);
    ASSERT_TRUE(c.on_returned(0));  // a message that returns nothing is fine at full credit
}

TEST(RdmaControlCredits, OnReturnedBeyondDepthIsAnErrorAndChangesNothing) {
    ControlCredits c(8);
    auto r = c.on_returned(1);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("returned 1 control credits, holding 8 of 8"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(c.available(), 8u);

    for (int i = 0; i < 5; ++i) c.on_send();  // holding 3, so at most 5 can come back
    r = c.on_returned(6);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("returned 6 control credits, holding 3 of 8"), std::string::npos)
        << r.error().message;
    EXPECT_EQ(c.available(), 3u);
    r = c.on_returned(0xffff);
    ASSERT_FALSE(r);
    EXPECT_EQ(c.available(), 3u);
    EXPECT_TRUE(c.on_returned(5));
    EXPECT_EQ(c.available(), 8u);
}

TEST(RdmaControlCredits, ShouldReturnCreditsAtHalfTheDepthOwed) {
    ControlCredits c(32);
    for (int i = 0; i < 15; ++i) {
        c.on_reposted();
        EXPECT_FALSE(c.should_return_credits()) << c.owed();
    }
    c.on_reposted();
    EXPECT_EQ(c.owed(), 16u);
    EXPECT_TRUE(c.should_return_credits());
    c.on_reposted();
    EXPECT_TRUE(c.should_return_credits());
    EXPECT_EQ(c.on_send(), 17u);
    EXPECT_FALSE(c.should_return_credits());
}

TEST(RdmaControlCredits, ShouldReturnCreditsWithTinyDepths) {
    // depth/2 is 0 for depth 1: owing one is enough, owing none never is.
    ControlCredits one(1);
    EXPECT_FALSE(one.should_return_credits());
    one.on_reposted();
    EXPECT_TRUE(one.should_return_credits());
    ControlCredits three(3);
    EXPECT_FALSE(three.should_return_credits());
    three.on_reposted();
    EXPECT_TRUE(three.should_return_credits());
}

// ---- two peers ------------------------------------------------------------------------

namespace {

constexpr unsigned kDepth = 32;

// When a side with nothing it may send, but owing credits, sends a credit-only message.
enum class ReturnRule {
    // Only when its queue of content is empty: deadlocks (kept to show why).
    queue_empty,
    // Also when content is queued but cannot go: what Channel::flush_control_locked does.
    content_blocked,
};

struct Msg {
    bool credit_only = false;
    uint16_t credits = 0;
    uint64_t seq = 0;  // content messages are numbered per direction
};

struct Link {
    std::deque<Msg> in_flight;  // FIFO, like a reliable-connected queue pair
    std::size_t most_in_flight = 0;
    uint64_t content_sent = 0;
    uint64_t content_received = 0;
    uint64_t credit_only_sent = 0;
};

struct Peer {
    std::string name;
    ControlCredits credits{kDepth};
    std::deque<uint64_t> queue;  // content waiting to be sent
    uint64_t next_seq = 0;
};

class Sim {
public:
    explicit Sim(ReturnRule rule) : rule_(rule) {
        a_.name = "A";
        b_.name = "B";
    }

    // Queues n content messages at a side and lets it send what it may.
    void burst(bool at_a, unsigned n) {
        Peer &p = at_a ? a_ : b_;
        for (unsigned i = 0; i < n; ++i) p.queue.push_back(p.next_seq++);
        flush(p, at_a ? ab_ : ba_);
    }

    // Delivers the oldest message of one direction; the receiver re-posts the
    // receive, takes the returned credits, then sends what it now may.
    // Returns false when nothing was in flight.
    bool deliver(bool a_to_b) {
        Link &l = a_to_b ? ab_ : ba_;
        Peer &to = a_to_b ? b_ : a_;
        if (l.in_flight.empty()) return false;
        Msg m = l.in_flight.front();
        l.in_flight.pop_front();
        // It consumed one of the receiver's kDepth posted receives (push() checked
        // that no more than kDepth were in flight); the receiver re-posts it at once.
        to.credits.on_reposted();
        auto ok = to.credits.on_returned(m.credits);
        EXPECT_TRUE(ok) << to.name << ": " << (ok ? "" : ok.error().message);
        if (!m.credit_only) {
            EXPECT_EQ(m.seq, l.content_received) << "content out of order or lost";
            ++l.content_received;
        }
        flush(to, a_to_b ? ba_ : ab_);
        return true;
    }

    // Sends what a side may, as Channel::flush_control_locked does: queued
    // content while it holds two credits, then a credit-only message if it owes
    // half the depth and the rule says it has nothing else to send.
    void flush(Peer &p, Link &out) {
        while (!p.queue.empty() && p.credits.may_send(false)) {
            Msg m{false, p.credits.on_send(), p.queue.front()};
            p.queue.pop_front();
            push(out, m);
            ++out.content_sent;
        }
        bool nothing_else = rule_ == ReturnRule::queue_empty ? p.queue.empty() : true;
        if (nothing_else && p.credits.should_return_credits() && p.credits.may_send(true)) {
            push(out, Msg{true, p.credits.on_send(), 0});
            ++out.credit_only_sent;
        }
    }

    // Every receive of each side is accounted for: a credit the sender holds,
    // a message in flight to the receiver, a re-posted receive the receiver
    // owes, or credits in flight back inside a message.
    void check_conservation() const {
        check_direction(a_, ab_, b_, ba_);
        check_direction(b_, ba_, a_, ab_);
    }

    // Stops adding work and runs until nothing moves; returns whether it settled.
    bool run_until_quiescent(int max_rounds = 100000) {
        for (int round = 0; round < max_rounds; ++round) {
            bool moved = deliver(true);
            moved = deliver(false) || moved;
            check_conservation();
            if (!moved) {
                // Nothing in flight: a last chance for either side to send.
                flush(a_, ab_);
                flush(b_, ba_);
                if (ab_.in_flight.empty() && ba_.in_flight.empty()) return true;
            }
        }
        return false;
    }

    Peer a_, b_;
    Link ab_, ba_;

private:
    void push(Link &l, const Msg &m) {
        l.in_flight.push_back(m);
        l.most_in_flight = std::max(l.most_in_flight, l.in_flight.size());
        // Each message in flight holds one of the receiver's posted receives.
        EXPECT_LE(l.in_flight.size(), kDepth) << "more messages in flight than receives posted: a SEND would meet none";
    }

    static void check_direction(const Peer &from, const Link &out, const Peer &to, const Link &back) {
        unsigned returning = 0;
        for (const Msg &m : back.in_flight) returning += m.credits;
        EXPECT_EQ(from.credits.available() + out.in_flight.size() + to.credits.owed() + returning, kDepth)
            << "credits of " << from.name << " not conserved";
    }

    ReturnRule rule_;
};

// Random bursts at both sides with random delivery order, then quiescence.
// Each step queues a burst of 1..48 messages at A (burst_percent of steps), at
// B (as often), or delivers the oldest message of one direction.
void run_random(ReturnRule rule, std::uint32_t seed, int steps, int burst_percent) {
    Sim sim(rule);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pick(0, 99);
    std::uniform_int_distribution<unsigned> burst_size(1, 48);
    for (int step = 0; step < steps; ++step) {
        int r = pick(rng);
        if (r < burst_percent) sim.burst(true, burst_size(rng));
        else if (r < 2 * burst_percent) sim.burst(false, burst_size(rng));
        else if (r < 2 * burst_percent + (100 - 2 * burst_percent) / 2) sim.deliver(true);
        else sim.deliver(false);
        sim.check_conservation();
        ASSERT_LE(sim.ab_.in_flight.size(), kDepth) << "step " << step;
        ASSERT_LE(sim.ba_.in_flight.size(), kDepth) << "step " << step;
        if (::testing::Test::HasFailure()) return;
    }
    EXPECT_GT(sim.ab_.content_sent, 0u);
    EXPECT_GT(sim.ba_.content_sent, 0u);

    ASSERT_TRUE(sim.run_until_quiescent()) << "messages kept flowing";
    EXPECT_TRUE(sim.a_.queue.empty()) << "A is stuck with " << sim.a_.queue.size() << " messages queued, holding "
                                      << sim.a_.credits.available() << " credits, owing " << sim.a_.credits.owed();
    EXPECT_TRUE(sim.b_.queue.empty()) << "B is stuck with " << sim.b_.queue.size() << " messages queued, holding "
                                      << sim.b_.credits.available() << " credits, owing " << sim.b_.credits.owed();
    EXPECT_EQ(sim.ab_.content_received, sim.a_.next_seq);
    EXPECT_EQ(sim.ba_.content_received, sim.b_.next_seq);
    EXPECT_LE(sim.ab_.most_in_flight, kDepth);
    EXPECT_LE(sim.ba_.most_in_flight, kDepth);
    ::testing::Test::RecordProperty("a_to_b_content", std::to_string(sim.ab_.content_sent));
    ::testing::Test::RecordProperty("b_to_a_content", std::to_string(sim.ba_.content_sent));
}

}  // namespace

TEST(RdmaControlCreditsSim, OneWayTrafficDrains) {
    // Only A has content (the sink sending grants): B returns credits with
    // credit-only messages and A's long queue drains without ever overrunning B.
    Sim sim(ReturnRule::content_blocked);
    sim.burst(true, 1000);
    EXPECT_EQ(sim.ab_.in_flight.size(), kDepth - 1);  // the last credit is kept back
    ASSERT_TRUE(sim.run_until_quiescent());
    EXPECT_TRUE(sim.a_.queue.empty());
    EXPECT_EQ(sim.ab_.content_received, 1000u);
    EXPECT_LE(sim.ab_.most_in_flight, kDepth);
    EXPECT_GT(sim.ba_.credit_only_sent, 0u);
}

// Both sides queue more content than they have credits for, before either
// hears from the other. Each then holds one credit (content needs two) and is
// owed 31 by the other. Under a rule that returns credits only with an empty
// queue nobody would ever send again (the deadlock this test caught in the
// first version of Channel::flush_control_locked); returning them whenever
// content cannot go drains both queues.
TEST(RdmaControlCreditsSim, CrossingBurstsDeadlockWhenCreditsReturnOnlyWithEmptyQueue) {
    Sim sim(ReturnRule::queue_empty);
    sim.burst(true, 40);
    sim.burst(false, 40);
    ASSERT_TRUE(sim.run_until_quiescent());
    EXPECT_FALSE(sim.a_.queue.empty());
    EXPECT_FALSE(sim.b_.queue.empty());
}

TEST(RdmaControlCreditsSim, CrossingBurstsDrainWhenCreditsReturnWheneverContentIsBlocked) {
    Sim sim(ReturnRule::content_blocked);
    sim.burst(true, 40);
    sim.burst(false, 40);
    ASSERT_TRUE(sim.run_until_quiescent());
    EXPECT_TRUE(sim.a_.queue.empty());
    EXPECT_TRUE(sim.b_.queue.empty());
    EXPECT_EQ(sim.ab_.content_received, 40u);
    EXPECT_EQ(sim.ba_.content_received, 40u);
}

// The rule Channel uses: credit-only messages also go while content is
// blocked. No seed deadlocks (checked for seeds 1..200 at burst_percent 1, 2,
// 4, 10 and 20 while writing this test).
TEST(RdmaControlCreditsSim, RandomBurstsNeverOverrunAndDrainWhenCreditsReturnWheneverContentIsBlocked) {
    for (int burst_percent : {2, 4, 20}) {
        for (std::uint32_t seed = 1; seed <= 20; ++seed) {
            SCOPED_TRACE("seed " + std::to_string(seed) + ", burst_percent " + std::to_string(burst_percent));
            run_random(ReturnRule::content_blocked, seed, 5000, burst_percent);
            if (HasFailure()) return;
        }
    }
}
