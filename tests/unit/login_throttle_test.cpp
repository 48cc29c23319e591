// The per-source login throttle: the spacing of password checks after wrong
// passwords, doubling to its most; checks from one source one at a time
// however many sessions ask at once; cleared by a success, forgotten after a
// quiet while; bounded in memory; and which addresses count as one source.
#include "daemon/auth/login_throttle.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

using namespace std::chrono_literals;
using rftp::daemon::login_source;
using rftp::daemon::LoginThrottle;

namespace {

LoginThrottle::Settings settings(std::size_t max_sources = 10000) {
    return LoginThrottle::Settings{1000ms, 8000ms, 900s, max_sources};
}

const LoginThrottle::Clock::time_point t0{};
constexpr auto kLoginTime = 30000ms;  // what a session has left to log in

}  // namespace

TEST(LoginThrottle, ASourceWithoutFailuresNeverWaits) {
    LoginThrottle throttle(settings());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 0ms);
    EXPECT_TRUE(throttle.clean("192.0.2.1", t0));
    EXPECT_EQ(throttle.sources(), 0u);
}

TEST(LoginThrottle, ACheckThatWasNoGuessGivesItsTurnBack) {
    LoginThrottle throttle(settings());
    EXPECT_EQ(throttle.failed("192.0.2.1", t0), 1u);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 1000ms);
    throttle.give_back_turn("192.0.2.1");  // its user's root could not be opened
    // The turn's place stays (3 s), but the turns after it are spaced as
    // after one failure, not two: 5 s, not 7 s.
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 3000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 5000ms);
}

TEST(LoginThrottle, EachFailureDoublesTheSpacingUpToTheMost) {
    LoginThrottle throttle(settings());
    EXPECT_EQ(throttle.delay_after(1), 1000ms);
    EXPECT_EQ(throttle.delay_after(2), 2000ms);
    EXPECT_EQ(throttle.delay_after(4), 8000ms);
    EXPECT_EQ(throttle.delay_after(40), 8000ms);
    // A guesser who reconnects after each answer: each next check waits the
    // spacing of the failures so far, counted from the last answer.
    auto now = t0;
    EXPECT_EQ(throttle.book_check("192.0.2.1", now, kLoginTime), 0ms);
    EXPECT_EQ(throttle.failed("192.0.2.1", now), 1u);
    EXPECT_EQ(throttle.book_check("192.0.2.1", now, kLoginTime), 1000ms);
    now += 1000ms;
    EXPECT_EQ(throttle.failed("192.0.2.1", now), 2u);
    EXPECT_EQ(throttle.book_check("192.0.2.1", now, kLoginTime), 2000ms);
    now += 2000ms;
    EXPECT_EQ(throttle.failed("192.0.2.1", now), 3u);
    EXPECT_EQ(throttle.book_check("192.0.2.1", now + 1000ms, kLoginTime), 3000ms);
    // Another source is not slowed.
    EXPECT_EQ(throttle.book_check("192.0.2.2", now, kLoginTime), 0ms);
}

TEST(LoginThrottle, SessionsOpenedAllAtOnceGetNoCheaperTurns) {
    LoginThrottle throttle(settings());
    throttle.failed("192.0.2.1", t0);
    // Each turn booked counts as a failure for the turns after it: 1, 2, 4,
    // 8 s apart, and the next would come after the login time: refused,
    // and nothing booked for it.
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 1000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 3000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 7000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 15000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 23000ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), std::nullopt);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), std::nullopt);
    EXPECT_EQ(throttle.wait_for_next("192.0.2.1", t0), 31000ms);
    // Their failures were counted when booked, not again when they come.
    for (int i = 0; i < 5; ++i) EXPECT_EQ(throttle.failed("192.0.2.1", t0 + 23000ms), 6u);
    EXPECT_EQ(throttle.failed("192.0.2.1", t0 + 23000ms), 7u);
}

TEST(LoginThrottle, HangingUpDoesNotBringTheNextTurnSooner) {
    LoginThrottle throttle(settings());
    throttle.failed("192.0.2.1", t0);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 1000ms);  // its session ends before its turn
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0 + 10ms, kLoginTime), 2990ms);
}

TEST(LoginThrottle, ASuccessClearsItsSource) {
    LoginThrottle throttle(settings());
    throttle.failed("192.0.2.1", t0);
    throttle.succeeded("192.0.2.1");
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 0ms);
    EXPECT_EQ(throttle.failed("192.0.2.1", t0), 1u);  // counting starts again
}

TEST(LoginThrottle, AQuietSourceIsForgotten) {
    LoginThrottle throttle(settings());
    for (int i = 0; i < 4; ++i) throttle.failed("192.0.2.1", t0);
    // Still counted after a long pause: the check comes at once, the next
    // one is spaced as before.
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0 + 899s, kLoginTime), 0ms);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0 + 899s, kLoginTime), 8000ms);
    EXPECT_EQ(throttle.failed("192.0.2.1", t0 + 899s), 6u);
    // Fifteen quiet minutes after the last failure, it starts afresh.
    EXPECT_FALSE(throttle.clean("192.0.2.1", t0 + 899s + 899s));
    EXPECT_TRUE(throttle.clean("192.0.2.1", t0 + 899s + 901s));
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0 + 899s + 901s, kLoginTime), 0ms);
    EXPECT_EQ(throttle.sources(), 0u);
    EXPECT_EQ(throttle.failed("192.0.2.1", t0 + 1801s), 1u);
}

TEST(LoginThrottle, OffWhenTheFirstDelayIsZero) {
    LoginThrottle throttle(LoginThrottle::Settings{0ms, 8000ms, 900s, 10000});
    EXPECT_EQ(throttle.failed("192.0.2.1", t0), 0u);
    EXPECT_EQ(throttle.book_check("192.0.2.1", t0, kLoginTime), 0ms);
    EXPECT_EQ(throttle.sources(), 0u);
}

TEST(LoginThrottle, AMostBelowTheFirstDelayIsTheFirstDelay) {
    LoginThrottle throttle(LoginThrottle::Settings{4000ms, 1000ms, 900s, 10000});
    EXPECT_EQ(throttle.delay_after(1), 4000ms);
    EXPECT_EQ(throttle.delay_after(3), 4000ms);
}

TEST(LoginThrottle, ACrowdOfSourcesTakesBoundedMemory) {
    LoginThrottle throttle(settings(3));
    throttle.failed("a", t0);
    throttle.failed("b", t0 + 1s);
    throttle.failed("c", t0 + 2s);
    throttle.failed("d", t0 + 3s);  // full: the quietest ("a") goes
    EXPECT_EQ(throttle.sources(), 3u);
    EXPECT_EQ(throttle.book_check("a", t0 + 3s, kLoginTime), 0ms);
    EXPECT_GT(throttle.book_check("d", t0 + 3s, kLoginTime), 0ms);
    // Forgotten sources make room before anyone recent is pushed out.
    throttle.failed("e", t0 + 1000s);
    EXPECT_EQ(throttle.sources(), 1u);
}

namespace {

sockaddr_storage address(const char *text) {
    sockaddr_storage s{};
    if (inet_pton(AF_INET, text, &reinterpret_cast<sockaddr_in &>(s).sin_addr) == 1) {
        s.ss_family = AF_INET;
    } else {
        EXPECT_EQ(inet_pton(AF_INET6, text, &reinterpret_cast<sockaddr_in6 &>(s).sin6_addr), 1) << text;
        s.ss_family = AF_INET6;
    }
    return s;
}

}  // namespace

TEST(LoginSource, AnIpv6AddressCountsByItsSlash64) {
    EXPECT_EQ(login_source(address("192.0.2.7")), "192.0.2.7");
    EXPECT_EQ(login_source(address("::ffff:192.0.2.7")), "192.0.2.7");
    EXPECT_EQ(login_source(address("2001:db8:1:2:aaaa::1")), "2001:db8:1:2::/64");
    EXPECT_EQ(login_source(address("2001:db8:1:2:bbbb::9")), "2001:db8:1:2::/64");
    EXPECT_NE(login_source(address("2001:db8:1:3::1")), login_source(address("2001:db8:1:2::1")));
}
