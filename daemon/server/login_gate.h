// When each password check runs. A check is one yescrypt or scrypt: tens
// of milliseconds and megabytes. So:
//   - at most max_concurrent() run at once; the rest queue (a crowd of
//     connections must not start a thread and its memory each);
//   - per source, in turns (LoginThrottle): spaced after wrong passwords,
//     or refused at once when the turn would come after the login timeout;
//   - from a source with no failure yet, one at a time until the first
//     answer: the others park. A burst of guesses opened all at once is
//     then spaced as soon as its first guess fails, and a client's sessions
//     opened together (rftp -j) all go once its first login succeeds.
// Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include "daemon/auth/login_throttle.h"
#include "daemon/server/background_tasks.h"

namespace rftp::daemon {

// One login's password check, for LoginGate::run.
struct LoginCheck {
    uint64_t session = 0;  // whose: a check still waiting for its turn is dropped when the session ends
    std::string source;    // login_source(peer)
    std::string user;      // the name whose password is checked
    LoginThrottle::Clock::time_point deadline;  // the session's login timeout
    std::string what;      // names the work (BackgroundTasks::run)
    std::function<void()> work, done, refused;
    // Too many failed logins from the source: no turn before time_left;
    // the argument is how long until it could get one.
    std::function<void(std::chrono::milliseconds)> throttled;
    // The login timeout passed while the check waited.
    std::function<void()> timed_out;
    bool booked = false;  // it took a throttle turn (set by LoginGate)
};

class LoginGate {
public:
    LoginGate(uv_loop_t *loop, BackgroundTasks &tasks, LoginThrottle::Settings settings);
    LoginGate(const LoginGate &) = delete;
    LoginGate &operator=(const LoginGate &) = delete;

    void run(LoginCheck check);
    // A real account's right password from source: the source is cleared,
    // and that user's other checks waiting there (a client's other
    // sessions, opened with this one) run now.
    void succeeded(const std::string &source, const std::string &user);
    // The session's running check failed for another reason than its
    // password (its root could not be opened): the turn it took, if any,
    // is given back.
    void not_a_guess(uint64_t session, const std::string &source);
    // A session that ended drops its waiting check (a turn it took stays
    // taken: hanging up does not make the next one come sooner).
    void drop(uint64_t session);
    // The daemon stops: nothing waiting starts any more.
    void stop();

    LoginThrottle &throttle() { return throttle_; }
    static unsigned max_concurrent();

private:
    struct Delayed;
    void book(LoginCheck check);   // the throttle's turn: now, after a timer, or refused
    void start(LoginCheck check);  // within max_concurrent()
    void launch(LoginCheck check);
    void finished(const std::string &source);
    void unpark(const std::string &source);
    void expire_parked(const std::string &source);
    static void on_turn(uv_timer_t *timer);
    static void on_timer_closed(uv_handle_t *timer);

    uv_loop_t *loop_;
    BackgroundTasks &tasks_;
    LoginThrottle throttle_;
    bool stopping_ = false;
    unsigned running_ = 0;
    std::deque<LoginCheck> queued_;                     // over max_concurrent()
    std::map<uint64_t, Delayed *> delayed_;             // waiting for a turn, by session; each owns its timer
    std::unordered_map<std::string, unsigned> checking_;  // started or queued, by source
    std::unordered_map<std::string, std::deque<LoginCheck>> parked_;  // behind a clean source's first check
    std::unordered_map<uint64_t, bool> running_booked_;  // by session: whether its running check took a turn
};

}  // namespace rftp::daemon
