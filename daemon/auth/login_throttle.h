// Slows password guessing from one source across sessions. A session is
// closed after limits.max_login_failures, but a guesser simply reconnects
// (or opens max_sessions_per_ip sessions at once); so after a wrong password
// every later login from the same source books a turn before its password
// is even checked, one at a time, spaced by a delay that doubles with each
// attempt (1, 2, 4 ... up to the most). A turn counts as a failure when it is
// booked, not when the check fails: sessions opened all at once, or one
// that hangs up before its answer, get no cheaper turns. (Before the first
// wrong password, LoginGate lets a source's checks run one at a time.) A
// turn that would come after the session's login time runs out is not
// booked: the login is refused at once. A login to a real account that
// succeeds clears its source; a check that was no guess gives its turn
// back; a source that stays quiet is forgotten. Loop thread only.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

namespace rftp::daemon {

class LoginThrottle {
public:
    using Clock = std::chrono::steady_clock;
    using Millis = std::chrono::milliseconds;

    struct Settings {
        Millis first_delay{1000};  // 0: no throttling
        Millis max_delay{30000};   // raised to first_delay if below it
        std::chrono::seconds forget_after{900};  // a source with no failure for this long starts afresh
        std::size_t max_sources = 10000;          // bounds the memory a crowd of addresses can take
    };

    explicit LoginThrottle(Settings settings);

    // Books source's next password check, no later than within time_left:
    // how long this login waits first (zero for a source without recent
    // failures). Nothing, and nothing booked, when its turn would come later.
    std::optional<Millis> book_check(const std::string &source, Clock::time_point now, Millis time_left);
    // A wrong password from source; returns its failures so far.
    unsigned failed(const std::string &source, Clock::time_point now);
    void succeeded(const std::string &source) { sources_.erase(source); }
    // No recent wrong password from source: its checks need no turn.
    bool clean(const std::string &source, Clock::time_point now) const;
    // A booked check that was no guess (it failed for another reason than
    // the password) gives its turn back.
    void give_back_turn(const std::string &source);
    // The spacing of checks after that many failures.
    Millis delay_after(unsigned failures) const;
    // When source's next check could start at the earliest (for a refusal's text).
    Millis wait_for_next(const std::string &source, Clock::time_point now) const;
    std::size_t sources() const { return sources_.size(); }

private:
    struct Source {
        unsigned failures = 0;  // wrong passwords, and turns booked since
        unsigned booked = 0;    // turns booked whose failure is already counted
        Clock::time_point last_failure;
        Clock::time_point next_check;  // the earliest the next check may start
    };
    using Sources = std::unordered_map<std::string, Source>;
    bool forgotten(const Source &s, Clock::time_point now) const { return now - s.last_failure > settings_.forget_after; }
    Sources::iterator add(const std::string &source, Clock::time_point now);
    void make_room(Clock::time_point now);

    Settings settings_;
    Sources sources_;
};

// What the throttle counts as one source: an IPv4 address, or an IPv6
// address's /64 (one site's share, which a guesser could otherwise walk).
std::string login_source(const sockaddr_storage &peer);

}  // namespace rftp::daemon
