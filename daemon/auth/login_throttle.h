// Slows password guessing from one source across sessions. A session is
// closed after limits.max_login_failures, but a guesser simply reconnects
// (or opens max_sessions_per_ip sessions at once); so after a wrong password
// every later login from the same source waits its turn before its password
// is even checked, one at a time, spaced by a delay that doubles with each
// failure (1, 2, 4 ... up to the most). Waiting before the check, not before
// the answer: a client that hangs up on a slow answer learns nothing sooner.
// A successful login clears its source; one that stays quiet is forgotten.
// Only ever used on the loop thread.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_map>

namespace rftp::daemon {

class LoginThrottle {
public:
    using Clock = std::chrono::steady_clock;
    using Millis = std::chrono::milliseconds;

    struct Settings {
        Millis first_delay{1000};  // 0: no throttling
        Millis max_delay{30000};
        std::chrono::seconds forget_after{900};  // a source with no failure for this long starts afresh
        std::size_t max_sources = 10000;          // bounds the memory a crowd of addresses can take
    };

    explicit LoginThrottle(Settings settings) : settings_(settings) {}

    // Reserves the next password check for source: how long this login
    // waits first. Zero for a source without recent failures.
    Millis wait_before_check(const std::string &source, Clock::time_point now);
    // A wrong password from source; returns its failures so far.
    unsigned failed(const std::string &source, Clock::time_point now);
    void succeeded(const std::string &source) { sources_.erase(source); }
    // The spacing of checks after that many failures (for logs and tests).
    Millis delay_after(unsigned failures) const;
    std::size_t sources() const { return sources_.size(); }

private:
    struct Source {
        unsigned failures = 0;
        Clock::time_point last_failure;
        Clock::time_point next_check;  // the earliest the next check may start
    };
    bool forgotten(const Source &s, Clock::time_point now) const { return now - s.last_failure > settings_.forget_after; }
    void make_room(Clock::time_point now);

    Settings settings_;
    std::unordered_map<std::string, Source> sources_;
};

// What the throttle counts as one source: an IPv4 address, or an IPv6
// address's /64 (one site's share, which a guesser could otherwise walk).
std::string login_source(const sockaddr_storage &peer);

}  // namespace rftp::daemon
