#include "daemon/auth/login_throttle.h"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "common/socket_address.h"

namespace rftp::daemon {

LoginThrottle::LoginThrottle(Settings settings) : settings_(settings) {
    settings_.max_delay = std::max(settings_.max_delay, settings_.first_delay);
}

LoginThrottle::Millis LoginThrottle::delay_after(unsigned failures) const {
    if (failures == 0 || settings_.first_delay.count() == 0) return Millis{0};
    Millis delay = settings_.first_delay;
    for (unsigned i = 1; i < failures && delay < settings_.max_delay; ++i) delay *= 2;
    return std::min(delay, settings_.max_delay);
}

std::optional<LoginThrottle::Millis> LoginThrottle::book_check(const std::string &source, Clock::time_point now,
                                                               Millis time_left) {
    auto it = sources_.find(source);
    if (it == sources_.end()) return Millis{0};
    Source &s = it->second;
    if (forgotten(s, now) && s.next_check <= now) {
        sources_.erase(it);
        return Millis{0};
    }
    Clock::time_point slot = std::max(now, s.next_check);
    Millis wait = std::chrono::ceil<Millis>(slot - now);
    if (wait > time_left) return std::nullopt;
    // Counted now as the failure it most likely is: the turns after it are
    // spaced as if it had failed, however many sessions ask at once.
    ++s.failures;
    ++s.booked;
    s.next_check = slot + delay_after(s.failures);
    return wait;
}

LoginThrottle::Millis LoginThrottle::wait_for_next(const std::string &source, Clock::time_point now) const {
    auto it = sources_.find(source);
    if (it == sources_.end() || it->second.next_check <= now) return Millis{0};
    return std::chrono::ceil<Millis>(it->second.next_check - now);
}

bool LoginThrottle::clean(const std::string &source, Clock::time_point now) const {
    auto it = sources_.find(source);
    return it == sources_.end() || (forgotten(it->second, now) && it->second.next_check <= now);
}

LoginThrottle::Sources::iterator LoginThrottle::add(const std::string &source, Clock::time_point now) {
    make_room(now);
    auto it = sources_.emplace(source, Source{}).first;
    it->second.last_failure = now;
    it->second.next_check = now;
    return it;
}

unsigned LoginThrottle::failed(const std::string &source, Clock::time_point now) {
    if (settings_.first_delay.count() == 0) return 0;
    auto it = sources_.find(source);
    if (it == sources_.end()) it = add(source, now);
    Source &s = it->second;
    if (s.booked > 0) --s.booked;  // counted when its turn was booked
    else ++s.failures;
    s.last_failure = now;
    s.next_check = std::max(s.next_check, now + delay_after(s.failures));
    return s.failures;
}

void LoginThrottle::give_back_turn(const std::string &source) {
    auto it = sources_.find(source);
    if (it == sources_.end() || it->second.booked == 0) return;
    Source &s = it->second;
    --s.booked;
    --s.failures;
    if (s.failures == 0) sources_.erase(it);
}

void LoginThrottle::make_room(Clock::time_point now) {
    if (sources_.size() < settings_.max_sources) return;
    std::erase_if(sources_, [&](const auto &entry) { return forgotten(entry.second, now) && entry.second.next_check <= now; });
    if (sources_.size() < settings_.max_sources) return;
    // Still full: the source quiet the longest goes (a crowd of addresses
    // can push a guesser out, but then each of them was slowed instead).
    auto oldest = std::min_element(sources_.begin(), sources_.end(), [](const auto &a, const auto &b) {
        return a.second.last_failure < b.second.last_failure;
    });
    sources_.erase(oldest);
}

std::string login_source(const sockaddr_storage &peer) {
    const auto &a = reinterpret_cast<const sockaddr_in6 &>(peer).sin6_addr;
    if (peer.ss_family != AF_INET6 || IN6_IS_ADDR_V4MAPPED(&a)) return address_text(peer);
    sockaddr_storage prefix = peer;
    std::memset(reinterpret_cast<sockaddr_in6 &>(prefix).sin6_addr.s6_addr + 8, 0, 8);
    return address_text(prefix) + "/64";
}

}  // namespace rftp::daemon
