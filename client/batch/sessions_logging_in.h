// The sessions of a many-file run after its first, logging in while the
// first one plans (lists the remote tree, makes the remote directories).
// A login is several round trips (connect, USER, PASS, FEAT, TYPE, and
// TLS's own): begun only once the plan is done, they add a quarter of a
// second and more on a 50 ms path before the other sessions move a file.
//
// Started only once the first session logged in, so a wrong password costs
// one refusal, not one per session.
#pragma once

#include <chrono>
#include <cstddef>
#include <future>
#include <mutex>
#include <optional>
#include <vector>

#include "client/commands/command_context.h"
#include "client/session.h"

namespace rftp::client {

class SessionsLoggingIn {
public:
    // One login for each session a run of at most most_files files opens
    // after its first (--concurrency sessions, never more than files).
    SessionsLoggingIn(const CommandContext &ctx, std::size_t most_files);
    // Waits for the logins still under way and ends every session no one took.
    ~SessionsLoggingIn();
    SessionsLoggingIn(const SessionsLoggingIn &) = delete;
    SessionsLoggingIn &operator=(const SessionsLoggingIn &) = delete;

    // Once the run knows it needs only wanted of them (fewer files than
    // sessions): the others are ended now, on a thread of their own,
    // rather than kept idle on the server through the whole run. Called
    // before the first take().
    void keep_only(std::size_t wanted);

    // The next login, waited for: a session, or why it failed. Nothing
    // when none is left, or when it has waited so long that the server may
    // have ended it for idleness (the caller then logs in anew).
    std::optional<Outcome<Session>> take();

private:
    struct Login {
        Outcome<Session> session;
        std::chrono::steady_clock::time_point done;
    };
    // Waits for logins_[first, end) and ends each that succeeded.
    void end_logins(std::size_t first, std::size_t end);

    std::mutex mutex_;
    std::vector<std::future<Login>> logins_;
    std::size_t taken_ = 0;    // logins_ handed out so far; under mutex_
    std::size_t wanted_ = 0;   // logins_ that may be handed out
    std::future<void> ending_;  // ends the logins past wanted_
};

}  // namespace rftp::client
