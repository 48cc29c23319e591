// The RDMA channel's tokens under TLS (token_binding.h): both ends of one
// TLS session derive the same token for each queue pair, every queue pair
// its own, none equal to the RADR reply's nonce, and another session
// derives others.
#include <gtest/gtest.h>

#include <set>

#include "middleware/tls/token_binding.h"
#include "tls_test_peer.h"

namespace rftp::middleware::tls {
namespace {

TEST(TokenBinding, BothEndsAgreeAndEachQueuePairHasItsOwn) {
    auto dir = std::filesystem::temp_directory_path() / ("tls-token-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto files = testing::make_certificate(dir, "server");
    auto server_ctx = *make_server_context({files.certificate, files.key});
    auto client_ctx = *make_client_context({.ca_file = files.certificate});
    auto session = [&] {
        auto [c, s] = testing::socket_pair();
        UniqueSsl server(SSL_new(server_ctx.get()));
        SSL_set_accept_state(server.get());
        auto h = testing::handshake_pair(std::move(*new_client_connection(client_ctx.get(), "localhost")), c.get(),
                                         std::move(server), s.get());
        EXPECT_TRUE(h.client_result && h.server_result);
        return h;
    };
    auto one = session(), other = session();
    const wire::ChannelToken nonce{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    auto server_side = bind_tokens(one.server.get(), nonce, 5);
    auto client_side = bind_tokens(one.client.get(), nonce, 5);
    auto elsewhere = bind_tokens(other.client.get(), nonce, 5);
    ASSERT_TRUE(server_side && client_side && elsewhere);
    EXPECT_EQ(server_side->per_index, client_side->per_index);
    std::set<wire::ChannelToken> seen(server_side->per_index.begin(), server_side->per_index.end());
    EXPECT_EQ(seen.size(), 5u);
    EXPECT_FALSE(seen.contains(nonce));
    for (unsigned i = 0; i < 5; ++i) EXPECT_NE(elsewhere->for_index(i), server_side->for_index(i));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rftp::middleware::tls
