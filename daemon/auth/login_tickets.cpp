#include "daemon/auth/login_tickets.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>

#include "common/hex.h"
#include "middleware/integrity/sha256.h"

namespace rftp::daemon {
namespace {

constexpr std::size_t kTicketBytes = 32;

std::string digest_of(std::string_view ticket) {
    middleware::Sha256 sha;
    sha.update(reinterpret_cast<const uint8_t *>(ticket.data()), ticket.size());
    return sha.hex();
}

// Exactly what issue() hands out: anything else is not looked up at all.
bool well_formed(std::string_view ticket) {
    if (ticket.size() != 2 * kTicketBytes) return false;
    for (char c : ticket)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

}  // namespace

Result<std::string> LoginTickets::issue(uint64_t session, TicketHolder holder) {
    std::array<uint8_t, kTicketBytes> bytes{};
    if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) return fail_msg("no random bytes for a login ticket");
    std::string ticket = hex_lower(bytes);
    OPENSSL_cleanse(bytes.data(), bytes.size());
    drop(session);
    std::string digest = digest_of(ticket);
    digest_of_session_[session] = digest;
    by_digest_.emplace(std::move(digest), std::make_pair(session, std::move(holder)));
    return ticket;
}

std::optional<LoginGrant> LoginTickets::redeem(std::string_view ticket, std::string_view user, std::string_view address,
                                               bool over_tls) const {
    if (!well_formed(ticket)) return std::nullopt;
    // Looked up by its digest: the table holds no ticket an attacker could
    // read out of memory and use, and a lookup's time says nothing of one.
    auto it = by_digest_.find(digest_of(ticket));
    if (it == by_digest_.end()) return std::nullopt;
    const TicketHolder &holder = it->second.second;
    if (holder.grant.user != user || holder.address != address) return std::nullopt;
    if (holder.over_tls && !over_tls) return std::nullopt;
    return holder.grant;
}

void LoginTickets::drop(uint64_t session) {
    auto it = digest_of_session_.find(session);
    if (it == digest_of_session_.end()) return;
    by_digest_.erase(it->second);
    digest_of_session_.erase(it);
}

}  // namespace rftp::daemon
