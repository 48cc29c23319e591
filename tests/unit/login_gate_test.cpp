// When password checks run (daemon/server/login_gate.h), on a real libuv
// loop and real worker threads: a clean source's checks one at a time until
// the first answer; after a wrong password, spaced turns; after a right
// one, that user's waiting checks at once and another name's after them;
// a parked check that outlives its login timeout timed out; a session that
// ends taking its parked check with it.
#include "daemon/server/login_gate.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "daemon/server/background_tasks.h"
#include "tests/unit/uv_test_loop.h"

using namespace std::chrono_literals;
using rftp::daemon::BackgroundTasks;
using rftp::daemon::LoginCheck;
using rftp::daemon::LoginGate;
using rftp::daemon::LoginThrottle;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kCheckTime = 50ms;  // what one password check takes here

// A gate on a loop, and what happened to each check, by session.
struct Bench {
    rftp::daemon::testing::UvTestLoop loop;
    BackgroundTasks tasks{*loop.bridge};
    LoginGate gate{&loop.loop, tasks, LoginThrottle::Settings{200ms, 1600ms, 900s, 10000}};
    Clock::time_point began = Clock::now();
    std::mutex mutex;
    std::map<uint64_t, Clock::duration> started, answered;
    std::map<uint64_t, std::string> endings;  // "ok", "wrong", "throttled", "timed out"
    std::atomic<int> running{0}, most_running{0};

    // A check of user's password from source; right says how it ends.
    void check(uint64_t session, const std::string &user, bool right, std::chrono::milliseconds time_left = 30s,
               const std::string &source = "192.0.2.1") {
        gate.run(LoginCheck{
            .session = session,
            .source = source,
            .user = user,
            .deadline = Clock::now() + time_left,
            .what = "check " + std::to_string(session),
            .work =
                [this, session] {
                    int now = ++running;
                    for (int most = most_running; now > most && !most_running.compare_exchange_weak(most, now);) {
                    }
                    {
                        std::lock_guard lock(mutex);
                        started[session] = Clock::now() - began;
                    }
                    std::this_thread::sleep_for(kCheckTime);
                    --running;
                },
            .done =
                [this, session, user, right, source] {
                    if (right) gate.succeeded(source, user);
                    else gate.throttle().failed(source, LoginThrottle::Clock::now());
                    end(session, right ? "ok" : "wrong");
                },
            .refused = [this, session] { end(session, "refused"); },
            .throttled = [this, session](std::chrono::milliseconds) { end(session, "throttled"); },
            .timed_out = [this, session] { end(session, "timed out"); },
        });
    }
    void end(uint64_t session, const char *how) {
        std::lock_guard lock(mutex);
        answered[session] = Clock::now() - began;
        endings[session] = how;
    }
    bool all_answered(std::size_t n) {
        return loop.until([&] {
            std::lock_guard lock(mutex);
            return answered.size() >= n;
        }, 10s);
    }
    ~Bench() { tasks.join_all(); }
};

}  // namespace

TEST(LoginGate, AFirstBurstOfGuessesRunsOneAtATimeThenTakesTurns) {
    Bench b;
    for (uint64_t s = 1; s <= 4; ++s) b.check(s, "alice", false);
    ASSERT_TRUE(b.all_answered(4));
    EXPECT_EQ(b.most_running.load(), 1);
    for (uint64_t s = 1; s <= 4; ++s) EXPECT_EQ(b.endings[s], "wrong") << s;
    // The first at once; after its failure, turns 200, 400 and 800 ms apart.
    EXPECT_LT(b.started[1], 100ms);
    EXPECT_GE(b.started[2] - b.answered[1], 190ms);
    EXPECT_GE(b.started[3] - b.started[2], 390ms);
    EXPECT_GE(b.started[4] - b.started[3], 790ms);
}

TEST(LoginGate, ARightPasswordLetsThatUsersWaitingChecksGoAndNoOneElses) {
    Bench b;
    b.check(1, "alice", true);
    b.check(2, "bob", false);  // parked first
    for (uint64_t s = 3; s <= 5; ++s) b.check(s, "alice", true);
    ASSERT_TRUE(b.all_answered(5));
    for (uint64_t s : {1, 3, 4, 5}) EXPECT_EQ(b.endings[s], "ok") << s;
    EXPECT_EQ(b.endings[2], "wrong");
    // alice's others start as soon as her first is answered (two at a time
    // where the machine has two cores); bob's after them.
    for (uint64_t s = 3; s <= 5; ++s) EXPECT_LT(b.started[s] - b.answered[1], 3 * kCheckTime) << s;
    for (uint64_t s = 3; s <= 5; ++s) EXPECT_GT(b.started[2], b.answered[s]) << s;
}

TEST(LoginGate, AParkedCheckPastItsLoginTimeoutIsTimedOut) {
    Bench b;
    b.check(1, "alice", false);
    b.check(2, "alice", false, 20ms);  // its login time ends while the first check runs
    b.check(3, "alice", false);
    ASSERT_TRUE(b.all_answered(3));
    EXPECT_EQ(b.endings[2], "timed out");
    EXPECT_FALSE(b.started.contains(2));
    EXPECT_EQ(b.endings[3], "wrong");
}

TEST(LoginGate, ASessionThatEndsTakesItsParkedCheckWithIt) {
    Bench b;
    b.check(1, "alice", false);
    b.check(2, "alice", false);
    b.check(3, "alice", false);
    b.gate.drop(2);
    ASSERT_TRUE(b.all_answered(2));
    b.loop.until([] { return false; }, 300ms);  // time for a stray answer
    EXPECT_FALSE(b.endings.contains(2));
    EXPECT_FALSE(b.started.contains(2));
    EXPECT_EQ(b.endings[3], "wrong");
}

TEST(LoginGate, AnotherSourceIsNotHeldUp) {
    Bench b;
    b.check(1, "alice", false);
    b.check(2, "alice", false, 30s, "192.0.2.2");
    ASSERT_TRUE(b.all_answered(2));
    EXPECT_LT(b.started[2], b.answered[1]);  // not parked behind the other source's check
}
