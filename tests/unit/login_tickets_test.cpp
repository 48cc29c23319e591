// The login ticket store: what a ticket is good for, and when it lapses.
#include "daemon/auth/login_tickets.h"

#include <gtest/gtest.h>

#include <set>

using namespace rftp::daemon;

namespace {

TicketHolder alice(bool over_tls = false) {
    return {LoginGrant{"alice", "/srv/alice", true, false}, "192.0.2.7", over_tls};
}

}  // namespace

TEST(LoginTickets, AreSixtyFourHexDigitsAndNeverRepeat) {
    LoginTickets tickets;
    std::set<std::string> seen;
    for (uint64_t session = 1; session <= 100; ++session) {
        auto t = tickets.issue(session, alice());
        ASSERT_TRUE(t);
        EXPECT_EQ(t->size(), 64u);
        EXPECT_EQ(t->find_first_not_of("0123456789abcdef"), std::string::npos) << *t;
        EXPECT_TRUE(seen.insert(*t).second);
    }
    EXPECT_EQ(tickets.size(), 100u);
}

TEST(LoginTickets, GrantTheAskingSessionsLoginForItsUserFromItsAddress) {
    LoginTickets tickets;
    auto t = tickets.issue(1, alice());
    ASSERT_TRUE(t);
    auto grant = tickets.redeem(*t, "alice", "192.0.2.7", false);
    ASSERT_TRUE(grant);
    EXPECT_EQ(grant->root, "/srv/alice");
    EXPECT_TRUE(grant->writable);
    EXPECT_TRUE(tickets.redeem(*t, "alice", "192.0.2.7", true)) << "clear to TLS is no downgrade";
    EXPECT_FALSE(tickets.redeem(*t, "bob", "192.0.2.7", false));
    EXPECT_FALSE(tickets.redeem(*t, "alice", "192.0.2.8", false));
    EXPECT_FALSE(tickets.redeem("", "alice", "192.0.2.7", false));
    std::string upper = *t;
    for (char &c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper != *t) {
        EXPECT_FALSE(tickets.redeem(upper, "alice", "192.0.2.7", false));
    }
}

TEST(LoginTickets, AskedUnderTlsAreRefusedInClear) {
    LoginTickets tickets;
    auto t = tickets.issue(1, alice(true));
    ASSERT_TRUE(t);
    EXPECT_FALSE(tickets.redeem(*t, "alice", "192.0.2.7", false));
    EXPECT_TRUE(tickets.redeem(*t, "alice", "192.0.2.7", true));
}

TEST(LoginTickets, LapseWhenTheirSessionEndsOrAsksAgain) {
    LoginTickets tickets;
    auto first = tickets.issue(1, alice());
    auto other = tickets.issue(2, alice());
    ASSERT_TRUE(first && other);
    auto second = tickets.issue(1, alice());
    ASSERT_TRUE(second);
    EXPECT_FALSE(tickets.redeem(*first, "alice", "192.0.2.7", false));
    EXPECT_TRUE(tickets.redeem(*second, "alice", "192.0.2.7", false));
    tickets.drop(1);
    EXPECT_FALSE(tickets.redeem(*second, "alice", "192.0.2.7", false));
    EXPECT_TRUE(tickets.redeem(*other, "alice", "192.0.2.7", false));
    tickets.drop(1);  // twice is harmless
    tickets.drop(2);
    EXPECT_EQ(tickets.size(), 0u);
}
