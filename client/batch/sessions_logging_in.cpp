#include "client/batch/sessions_logging_in.h"

#include <algorithm>
#include <system_error>

#include "client/batch/batch_run.h"

namespace rftp::client {
namespace {

// A session older than this at its first file is ended and opened anew:
// a plan that lists a large tree over a long path can take minutes, and
// rftpd ends a session after timeouts.idle without a command (300 s by
// default; other servers may wait less).
constexpr std::chrono::seconds kFreshFor{30};

}  // namespace

SessionsLoggingIn::SessionsLoggingIn(const CommandContext &ctx, std::size_t most_files) {
    const std::size_t sessions = std::min<std::size_t>(ctx.options.concurrency, most_files);
    const std::size_t count = sessions > 1 ? sessions - 1 : 0;
    logins_.reserve(count);
    for (std::size_t i = 0; i < count; ++i)
        logins_.push_back(std::async(std::launch::async, [&ctx] {
            auto session = open_transfer_session(ctx);
            return Login{std::move(session), std::chrono::steady_clock::now()};
        }));
    wanted_ = count;
}

SessionsLoggingIn::~SessionsLoggingIn() {
    if (ending_.valid()) ending_.wait();
    end_logins(taken_, wanted_);
}

// Each on a thread of its own: a QUIT waits a round trip for its 221, and
// one after the other they would hold the run's end that many.
void SessionsLoggingIn::end_logins(std::size_t first, std::size_t end) {
    auto end_one = [this](std::size_t i) {
        Login login = logins_[i].get();
        if (login.session) close_session(*login.session);
    };
    std::vector<std::future<void>> ending;
    for (std::size_t i = first; i < end; ++i) {
        try {
            ending.push_back(std::async(std::launch::async, end_one, i));
        } catch (const std::system_error &) {
            end_one(i);  // no thread to spare: this one in turn
        }
    }
    for (auto &e : ending) e.wait();
}

void SessionsLoggingIn::keep_only(std::size_t wanted) {
    std::lock_guard lock(mutex_);
    if (wanted >= wanted_ || ending_.valid()) return;
    const std::size_t end = wanted_;
    wanted_ = wanted;
    ending_ = std::async(std::launch::async, [this, wanted, end] { end_logins(wanted, end); });
}

std::optional<Outcome<Session>> SessionsLoggingIn::take() {
    std::size_t index = 0;
    {
        // Only the claim is under the lock: another thread's login, ready
        // meanwhile, is not held up behind this one's.
        std::lock_guard lock(mutex_);
        if (taken_ == wanted_) return std::nullopt;
        index = taken_++;
    }
    Login login = logins_[index].get();
    if (login.session && std::chrono::steady_clock::now() - login.done > kFreshFor) {
        close_session(*login.session);
        return std::nullopt;
    }
    return std::move(login.session);
}

}  // namespace rftp::client
