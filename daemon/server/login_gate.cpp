#include "daemon/server/login_gate.h"

#include <algorithm>
#include <iterator>
#include <thread>
#include <vector>

#include "common/log.h"

namespace rftp::daemon {

struct LoginGate::Delayed {
    uv_timer_t timer{};
    LoginGate *gate = nullptr;
    LoginCheck check;
};

LoginGate::LoginGate(uv_loop_t *loop, BackgroundTasks &tasks, LoginThrottle::Settings settings)
    : loop_(loop), tasks_(tasks), throttle_(settings) {}

unsigned LoginGate::max_concurrent() { return std::max(2u, std::thread::hardware_concurrency()); }

void LoginGate::run(LoginCheck check) {
    const std::string &source = check.source;
    if (!stopping_ && checking_.contains(source) && throttle_.clean(source, LoginThrottle::Clock::now())) {
        log::debug("event=login_parked session=" + std::to_string(check.session) + " source=" + source);
        parked_[source].push_back(std::move(check));
        return;
    }
    book(std::move(check));
}

void LoginGate::book(LoginCheck check) {
    const auto now = LoginThrottle::Clock::now();
    const auto time_left = std::chrono::ceil<std::chrono::milliseconds>(check.deadline - now);
    if (time_left.count() <= 0) return check.timed_out();
    check.booked = !throttle_.clean(check.source, now);
    auto wait = throttle_.book_check(check.source, now, time_left);
    if (!wait) return check.throttled(std::max(throttle_.wait_for_next(check.source, now), std::chrono::milliseconds(1000)));
    if (wait->count() == 0 || stopping_) return start(std::move(check));
    log::debug("event=login_delayed session=" + std::to_string(check.session) + " source=" + check.source +
               " delay_ms=" + std::to_string(wait->count()));
    drop(check.session);  // one login at a time per session; none should be left
    auto *delayed = new Delayed{{}, this, std::move(check)};
    uv_timer_init(loop_, &delayed->timer);
    delayed->timer.data = delayed;
    uv_timer_start(&delayed->timer, &LoginGate::on_turn, static_cast<uint64_t>(wait->count()), 0);
    delayed_[delayed->check.session] = delayed;
}

void LoginGate::on_turn(uv_timer_t *timer) {
    auto *delayed = static_cast<Delayed *>(timer->data);
    LoginGate *self = delayed->gate;
    self->delayed_.erase(delayed->check.session);
    LoginCheck check = std::move(delayed->check);
    uv_close(reinterpret_cast<uv_handle_t *>(timer), &LoginGate::on_timer_closed);
    self->start(std::move(check));
}

void LoginGate::on_timer_closed(uv_handle_t *timer) { delete static_cast<Delayed *>(timer->data); }

void LoginGate::start(LoginCheck check) {
    ++checking_[check.source];
    if (running_ >= max_concurrent()) return queued_.push_back(std::move(check));
    launch(std::move(check));
}

void LoginGate::launch(LoginCheck check) {
    ++running_;
    running_booked_[check.session] = check.booked;
    auto after = [this, source = check.source, session = check.session] {
        --running_;
        running_booked_.erase(session);
        finished(source);
        if (queued_.empty() || stopping_) return;
        LoginCheck next = std::move(queued_.front());
        queued_.pop_front();
        launch(std::move(next));
    };
    tasks_.run(
        std::move(check.what), std::move(check.work),
        [done = std::move(check.done), after] {
            done();
            after();
        },
        [refused = std::move(check.refused), after] {
            refused();
            after();  // each queued login gets its own answer, not silence
        });
}

// The check's answer has updated the throttle (a session that went away
// meanwhile left it as booked). What parked behind it goes on.
void LoginGate::finished(const std::string &source) {
    auto it = checking_.find(source);
    if (it == checking_.end()) return;
    if (--it->second > 0) return expire_parked(source);  // a stream of one user's logins must not hold the others
    checking_.erase(it);
    unpark(source);
}

void LoginGate::expire_parked(const std::string &source) {
    auto it = parked_.find(source);
    if (it == parked_.end()) return;
    const auto now = LoginThrottle::Clock::now();
    std::vector<LoginCheck> expired;
    auto late = std::stable_partition(it->second.begin(), it->second.end(),
                                      [&](const LoginCheck &c) { return c.deadline > now; });
    std::move(late, it->second.end(), std::back_inserter(expired));
    it->second.erase(late, it->second.end());
    if (it->second.empty()) parked_.erase(it);
    for (LoginCheck &check : expired) check.timed_out();
}

void LoginGate::not_a_guess(uint64_t session, const std::string &source) {
    auto it = running_booked_.find(session);
    if (it != running_booked_.end() && it->second) throttle_.give_back_turn(source);
}

// Parked checks run again from the start: the first from a still clean
// source runs and the others park anew; after a failure each takes a
// spaced turn or is refused.
void LoginGate::unpark(const std::string &source) {
    auto it = parked_.find(source);
    if (it == parked_.end()) return;
    std::deque<LoginCheck> waiting = std::move(it->second);
    parked_.erase(it);
    for (LoginCheck &check : waiting) run(std::move(check));
}

void LoginGate::succeeded(const std::string &source, const std::string &user) {
    throttle_.succeeded(source);
    // Only the same user's: another name's waiting check may be a guess by
    // whoever holds this account.
    std::vector<LoginCheck> released;
    for (auto it = delayed_.begin(); it != delayed_.end();) {
        Delayed *delayed = it->second;
        if (delayed->check.source != source || delayed->check.user != user) {
            ++it;
            continue;
        }
        released.push_back(std::move(delayed->check));
        uv_close(reinterpret_cast<uv_handle_t *>(&delayed->timer), &LoginGate::on_timer_closed);
        it = delayed_.erase(it);
    }
    if (auto it = parked_.find(source); it != parked_.end()) {
        std::deque<LoginCheck> &parked = it->second;
        auto same_user = std::stable_partition(parked.begin(), parked.end(),
                                               [&](const LoginCheck &c) { return c.user != user; });
        std::move(same_user, parked.end(), std::back_inserter(released));
        parked.erase(same_user, parked.end());
        if (parked.empty()) parked_.erase(it);
    }
    for (LoginCheck &check : released) start(std::move(check));
}

void LoginGate::drop(uint64_t session) {
    if (auto it = delayed_.find(session); it != delayed_.end()) {
        uv_close(reinterpret_cast<uv_handle_t *>(&it->second->timer), &LoginGate::on_timer_closed);
        delayed_.erase(it);
    }
    for (auto it = parked_.begin(); it != parked_.end();) {
        std::erase_if(it->second, [&](const LoginCheck &c) { return c.session == session; });
        it = it->second.empty() ? parked_.erase(it) : std::next(it);
    }
}

void LoginGate::stop() {
    stopping_ = true;
    // Checks waiting for their turn end with their sessions.
    for (auto &[session, d] : delayed_) uv_close(reinterpret_cast<uv_handle_t *>(&d->timer), &LoginGate::on_timer_closed);
    delayed_.clear();
    parked_.clear();
}

}  // namespace rftp::daemon
