// A data connection is served only when it resumed a session its own
// control connection's TLS issued (session_binding.h), under TLS 1.3
// tickets and TLS 1.2 alike.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "middleware/tls/session_binding.h"
#include "tls_test_peer.h"

namespace rftp::middleware::tls {
namespace {

using testing::handshake_pair;
using testing::socket_pair;

class SessionBinding : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("tls-binding-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        auto files = testing::make_certificate(dir_, "server");
        auto server = make_server_context({files.certificate, files.key});
        ASSERT_TRUE(server) << server.error().message;
        server_ = *server;
        SSL_CTX_set_max_proto_version(server_.get(), GetParam());
        auto client = make_client_context({.ca_file = files.certificate});
        ASSERT_TRUE(client) << client.error().message;
        client_ = *client;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // A control connection (its tickets carry tag), or a data connection
    // that resumes session, as the daemon makes them (transfer_job.cpp).
    testing::Handshaken connect(const BindingTag &tag, SSL_SESSION *session) {
        auto [c, s] = socket_pair();
        UniqueSsl server(SSL_new(server_.get()));
        SSL_set_accept_state(server.get());
        const bool control = session == nullptr;
        if (control) set_binding_tag(server.get(), tag);
        else SSL_set_num_tickets(server.get(), 0);
        auto client = new_client_connection(client_.get(), "localhost", session);
        auto h = handshake_pair(std::move(*client), c.get(), std::move(server), s.get());
        EXPECT_TRUE(h.client_result) << h.client_result.error().message;
        EXPECT_TRUE(h.server_result) << h.server_result.error().message;
        if (control) (void)tag_established_session(h.server.get());
        // TLS 1.3 tickets come after the handshake: the client reads them.
        char byte;
        SSL_write(h.server.get(), "x", 1);
        SSL_read(h.client.get(), &byte, 1);
        fds_.push_back(std::move(c));
        fds_.push_back(std::move(s));
        return h;
    }

    std::filesystem::path dir_;
    SharedSslCtx server_, client_;
    std::vector<UniqueFd> fds_;
};

TEST_P(SessionBinding, ADataConnectionThatResumesItsControlSessionIsBound) {
    const BindingTag tag = new_binding_tag();
    auto control = connect(tag, nullptr);
    UniqueSslSession session(SSL_get1_session(control.client.get()));
    auto data = connect(tag, session.get());
    EXPECT_TRUE(SSL_session_reused(data.server.get()));
    EXPECT_TRUE(resumed_with_tag(data.server.get(), tag));
}

TEST_P(SessionBinding, ASessionOfAnotherControlConnectionIsNotBound) {
    const BindingTag mine = new_binding_tag(), theirs = new_binding_tag();
    auto other = connect(theirs, nullptr);
    UniqueSslSession session(SSL_get1_session(other.client.get()));
    auto data = connect(mine, session.get());
    EXPECT_FALSE(resumed_with_tag(data.server.get(), mine));
}

TEST_P(SessionBinding, AFullHandshakeIsNotBound) {
    const BindingTag tag = new_binding_tag();
    auto control = connect(tag, nullptr);
    auto data = connect(tag, nullptr);
    EXPECT_FALSE(SSL_session_reused(data.server.get()));
    EXPECT_FALSE(resumed_with_tag(data.server.get(), tag));
}

TEST_P(SessionBinding, AControlConnectionThatResumesKeepsTheTagOfTheSessionItResumed) {
    // A client that resumes its control connection too (curl keeps sessions
    // across connections): under TLS 1.2 by ID the session is shared, and
    // must keep the first connection's tag for that connection's sake.
    const BindingTag first = new_binding_tag(), second = new_binding_tag();
    auto one = connect(first, nullptr);
    UniqueSslSession session(SSL_get1_session(one.client.get()));
    auto [c, s] = socket_pair();
    UniqueSsl server(SSL_new(server_.get()));
    SSL_set_accept_state(server.get());
    set_binding_tag(server.get(), second);
    auto h = handshake_pair(std::move(*new_client_connection(client_.get(), "localhost", session.get())), c.get(),
                            std::move(server), s.get());
    ASSERT_TRUE(h.client_result && h.server_result);
    auto inherited = tag_established_session(h.server.get());
    // Under TLS 1.3 the session is a copy, re-tagged by the tickets it issued.
    if (GetParam() == TLS1_2_VERSION) {
        ASSERT_TRUE(inherited.has_value());
        EXPECT_EQ(*inherited, first);
    }
    // The first connection's data connections still resume with its tag.
    auto data = connect(first, session.get());
    EXPECT_TRUE(resumed_with_tag(data.server.get(), first));
}

INSTANTIATE_TEST_SUITE_P(Versions, SessionBinding, ::testing::Values(TLS1_3_VERSION, TLS1_2_VERSION));

}  // namespace
}  // namespace rftp::middleware::tls
