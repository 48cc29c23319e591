// The login ticket a run's first session got (docs/protocol.md, "Login
// tickets: TCKT"), for its other sessions: they log in with it instead of
// the password, so the server checks the password once per run. Shared by
// the run's session threads. A ticket is good while the session that got it
// is open: closing that session forgets it (Session::issued_ticket).
#pragma once

#include <openssl/crypto.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace rftp::client {

class LoginTicketShelf {
public:
    LoginTicketShelf() = default;
    ~LoginTicketShelf() { forget(); }
    LoginTicketShelf(const LoginTicketShelf &) = delete;
    LoginTicketShelf &operator=(const LoginTicketShelf &) = delete;

    std::optional<std::string> ticket() const {
        std::lock_guard lock(mutex_);
        return ticket_;
    }
    // Returns which ticket this is, for forget_if.
    uint64_t keep(std::string ticket) {
        std::lock_guard lock(mutex_);
        wipe_locked();
        ticket_ = std::move(ticket);
        return ++generation_;
    }
    // Refused: the sessions after this one send the password.
    void forget() {
        std::lock_guard lock(mutex_);
        wipe_locked();
    }
    // The session that got ticket number generation ends, and with it the
    // ticket: unless a newer one took its place.
    void forget_if(uint64_t generation) {
        std::lock_guard lock(mutex_);
        if (generation == generation_) wipe_locked();
    }

private:
    void wipe_locked() {
        if (ticket_) OPENSSL_cleanse(ticket_->data(), ticket_->size());
        ticket_.reset();
    }

    mutable std::mutex mutex_;
    std::optional<std::string> ticket_;
    uint64_t generation_ = 0;
};

}  // namespace rftp::client
