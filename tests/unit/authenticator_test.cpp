// Logins against real scrypt hashes made once for the suite.
#include "daemon/auth/authenticator.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "daemon/auth/anonymous_name.h"
#include "daemon/auth/password_hash.h"

using namespace rftp::daemon;

namespace {

class AuthenticatorTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        auto alice = hash_password("alice-secret");
        auto bob = hash_password("bob-secret");
        ASSERT_TRUE(alice && bob);
        alice_hash_ = *alice;
        bob_hash_ = *bob;
    }

    static DaemonOptions options(bool anonymous) {
        DaemonOptions o;
        o.users.push_back(UserAccount{"alice", alice_hash_, "/srv/alice", Access::read_write});
        o.users.push_back(UserAccount{"bob", bob_hash_, "/srv/bob", Access::read_only});
        o.anonymous_enabled = anonymous;
        o.anonymous_root = anonymous ? "/srv/pub" : "";
        return o;
    }

    static inline std::string alice_hash_;
    static inline std::string bob_hash_;
};

void expect_refused(const rftp::Result<LoginGrant> &r) {
    ASSERT_FALSE(r) << "login granted to " << r->user;
    EXPECT_EQ(r.error().code, kLoginIncorrect);
    EXPECT_EQ(r.error().message, "Login incorrect.");
}

}  // namespace

TEST_F(AuthenticatorTest, ReadWriteUserGetsWritableRoot) {
    Authenticator auth(options(false));
    auto grant = auth.login("alice", "alice-secret");
    ASSERT_TRUE(grant) << grant.error().message;
    EXPECT_EQ(grant->user, "alice");
    EXPECT_EQ(grant->root, "/srv/alice");
    EXPECT_TRUE(grant->writable);
    EXPECT_FALSE(grant->anonymous);
}

TEST_F(AuthenticatorTest, ReadOnlyUserIsNotWritable) {
    Authenticator auth(options(false));
    auto grant = auth.login("bob", "bob-secret");
    ASSERT_TRUE(grant) << grant.error().message;
    EXPECT_EQ(grant->root, "/srv/bob");
    EXPECT_FALSE(grant->writable);
}

TEST_F(AuthenticatorTest, WrongPasswordAndUnknownUserLookTheSame) {
    Authenticator auth(options(false));
    expect_refused(auth.login("alice", "bob-secret"));
    expect_refused(auth.login("alice", ""));
    expect_refused(auth.login("mallory", "alice-secret"));
    expect_refused(auth.login("", ""));
    expect_refused(auth.login("Alice", "alice-secret"));  // names are case-sensitive
}

TEST_F(AuthenticatorTest, AnonymousRefusedWhenDisabled) {
    Authenticator auth(options(false));
    expect_refused(auth.login("anonymous", "me@example.org"));
    expect_refused(auth.login("ftp", ""));
}

TEST_F(AuthenticatorTest, AnonymousIsReadOnlyWithAnyPassword) {
    Authenticator auth(options(true));
    for (const char *name : {"anonymous", "ftp", "FTP", "Anonymous"}) {
        auto grant = auth.login(name, "whatever");
        ASSERT_TRUE(grant) << name << ": " << grant.error().message;
        EXPECT_TRUE(grant->anonymous);
        EXPECT_FALSE(grant->writable);
        EXPECT_EQ(grant->root, "/srv/pub");
        EXPECT_EQ(grant->user, "anonymous");
    }
    // Enabling anonymous changes nothing for real accounts.
    expect_refused(auth.login("alice", "wrong"));
    EXPECT_TRUE(auth.login("alice", "alice-secret"));
}

TEST_F(AuthenticatorTest, RecognisesAnonymousNames) {
    EXPECT_TRUE(is_anonymous_name("anonymous"));
    EXPECT_TRUE(is_anonymous_name("ANONYMOUS"));
    EXPECT_TRUE(is_anonymous_name("ftp"));
    EXPECT_FALSE(is_anonymous_name("alice"));
    EXPECT_FALSE(is_anonymous_name("anon"));
    EXPECT_FALSE(is_anonymous_name("ftp "));
}

TEST_F(AuthenticatorTest, ConcurrentLoginsFromWorkerThreads) {
    const Authenticator auth(options(true));
    std::vector<int> outcomes(6, -1);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < outcomes.size(); ++i) {
        threads.emplace_back([&, i] {
            const bool good = i % 2 == 0;
            auto grant = auth.login(i % 3 == 0 ? "alice" : "bob", good ? (i % 3 == 0 ? "alice-secret" : "bob-secret") : "nope");
            outcomes[i] = grant.has_value() ? 1 : 0;
        });
    }
    for (auto &t : threads) t.join();
    for (size_t i = 0; i < outcomes.size(); ++i) EXPECT_EQ(outcomes[i], i % 2 == 0 ? 1 : 0) << i;
}

TEST_F(AuthenticatorTest, AnUnknownNameCostsWhatMostAccountsCost) {
    // Accounts with older, cheaper hashes (ln=10, made by hashlib.scrypt):
    // an unknown name checked at the default cost would answer slower than
    // their names do, and so tell them apart.
    const std::string cheap =
        "$scrypt$ln=10,r=8,p=1$5C/+qNI1eY7VohXbh7nA7g==$oTXdnd0K9Cp86VagbQDXMRvaiFUQFplrOsX002r+iO0=";
    EXPECT_EQ(Authenticator(options(false)).unknown_name_cost(), "$y$j9T");  // alice's and bob's: new hashes
    DaemonOptions o = options(false);
    for (const char *name : {"carol", "dave", "erin"}) o.users.push_back(UserAccount{name, cheap, "/srv/c", Access::read_only});
    Authenticator auth(o);
    EXPECT_EQ(auth.unknown_name_cost(), "$scrypt$ln=10,r=8,p=1");
    ASSERT_TRUE(auth.login("carol", "carol-secret"));
    // The hash an unknown name is checked against is carol's: her password
    // under another name still opens nothing.
    expect_refused(auth.login("mallory", "carol-secret"));
    EXPECT_EQ(Authenticator(DaemonOptions{}).unknown_name_cost(), "$scrypt$ln=15,r=8,p=1");
}

TEST_F(AuthenticatorTest, HashesOfTheSameCostAreOneGroupWhateverTheirSpelling) {
    // sha512crypt without rounds= means 5000; scrypt's $7$ has its salt
    // right after its parameters. Counted apart, each would be a group of
    // one, and a smaller group could set the time an unknown name takes.
    DaemonOptions o = options(false);  // alice and bob: yescrypt
    o.users.push_back(UserAccount{"carol", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1", "/srv/c", Access::read_only});
    o.users.push_back(UserAccount{"dave", "$6$rounds=5000$abc$x", "/srv/d", Access::read_only});
    o.users.push_back(UserAccount{"erin", "$6$rounds=5000$def$y", "/srv/e", Access::read_only});
    EXPECT_EQ(Authenticator(o).unknown_name_cost(), "$6$rounds=5000");
    DaemonOptions s = options(false);
    for (const char *name : {"frank", "grace", "heidi"})
        s.users.push_back(UserAccount{name, std::string("$7$CU..../....") + name + "$hash", "/srv/s", Access::read_only});
    EXPECT_EQ(Authenticator(s).unknown_name_cost(), "$7$CU..../....");
}
