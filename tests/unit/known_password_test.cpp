// known_password: a password may go before the server asks for it (a
// pipelined login) only when no one has to be asked for it.
#include "client/credentials.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace rftp::client;

namespace {

class KnownPassword : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char *p = std::getenv("RFTP_PASSWORD")) saved_ = p;
        ::unsetenv("RFTP_PASSWORD");
    }
    void TearDown() override {
        if (saved_) ::setenv("RFTP_PASSWORD", saved_->c_str(), 1);
        else ::unsetenv("RFTP_PASSWORD");
    }
    std::optional<std::string> saved_;
};

}  // namespace

TEST_F(KnownPassword, FromNetrcFirst) {
    ::setenv("RFTP_PASSWORD", "from-env", 1);
    Credentials c{.user = "alice", .netrc_password = "from-netrc", .account = {}, .host = "h"};
    EXPECT_EQ(known_password(c), "from-netrc");
}

TEST_F(KnownPassword, FromTheEnvironment) {
    ::setenv("RFTP_PASSWORD", "from-env", 1);
    Credentials c{.user = "alice", .netrc_password = {}, .account = {}, .host = "h"};
    EXPECT_EQ(known_password(c), "from-env");
}

TEST_F(KnownPassword, AnonymousNeedsNoSecret) {
    Credentials c{.user = "anonymous", .netrc_password = {}, .account = {}, .host = "h"};
    EXPECT_EQ(known_password(c), "rftp@");
}

TEST_F(KnownPassword, OneToTypeIsNotKnown) {
    Credentials c{.user = "bob", .netrc_password = {}, .account = {}, .host = "nowhere.example"};
    EXPECT_EQ(known_password(c), std::nullopt);
}
