// The login ticket a run's first session got (docs/protocol.md, "Login
// tickets: TCKT"), for its other sessions: they log in with it instead of
// the password, so the server checks the password once per run. Shared by
// the run's session threads.
#pragma once

#include <openssl/crypto.h>

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
    void keep(std::string ticket) {
        std::lock_guard lock(mutex_);
        wipe_locked();
        ticket_ = std::move(ticket);
    }
    // Refused: the sessions after this one send the password.
    void forget() {
        std::lock_guard lock(mutex_);
        wipe_locked();
    }

private:
    void wipe_locked() {
        if (ticket_) OPENSSL_cleanse(ticket_->data(), ticket_->size());
        ticket_.reset();
    }

    mutable std::mutex mutex_;
    std::optional<std::string> ticket_;
};

}  // namespace rftp::client
