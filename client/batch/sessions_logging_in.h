// The sessions of a many-file run after its first, logging in while the
// first one plans (lists the remote tree, makes the remote directories).
// A login is five round trips (connect, USER, PASS, FEAT, TYPE): begun
// only once the plan is done, they add a quarter of a second on a 50 ms
// path before the other sessions move a file.
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

    // The next login, waited for: a session, or why it failed. Nothing
    // when none is left, or when it has waited so long that the server may
    // have ended it for idleness (the caller then logs in anew).
    std::optional<Outcome<Session>> take();

private:
    struct Login {
        Outcome<Session> session;
        std::chrono::steady_clock::time_point done;
    };
    std::mutex mutex_;
    std::vector<std::future<Login>> logins_;
    std::size_t taken_ = 0;
};

}  // namespace rftp::client
