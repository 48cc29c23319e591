// Login tickets (docs/protocol.md, "Login tickets: TCKT"): a logged-in
// session asks for one, and its client's other sessions show it instead of
// the password, so a client with several sessions pays one password check.
//
// A ticket is 32 random bytes, kept only as its SHA-256. It is good while
// the session that asked for it is open, for that session's user, from its
// address, and under TLS where it was asked for under TLS. Loop thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/result.h"
#include "daemon/auth/authenticator.h"

namespace rftp::daemon {

// Who asked for a ticket, and what logging in with it grants.
struct TicketHolder {
    LoginGrant grant;     // the asking session's login
    std::string address;  // its peer's address, without the port
    bool over_tls = false;
};

class LoginTickets {
public:
    // A new ticket for session (64 lower-case hex digits), replacing any it held.
    Result<std::string> issue(uint64_t session, TicketHolder holder);
    // The grant of the session that asked for ticket, when the ticket is
    // good for user, from address, over TLS or not.
    std::optional<LoginGrant> redeem(std::string_view ticket, std::string_view user, std::string_view address,
                                     bool over_tls) const;
    // The session ended (or logged out): its ticket is no longer good.
    void drop(uint64_t session);
    std::size_t size() const { return by_digest_.size(); }

private:
    std::unordered_map<std::string, std::pair<uint64_t, TicketHolder>> by_digest_;  // SHA-256 hex of the ticket
    std::unordered_map<uint64_t, std::string> digest_of_session_;
};

}  // namespace rftp::daemon
