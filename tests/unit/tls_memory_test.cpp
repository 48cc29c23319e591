// MemoryTls (memory_tls.h), the event loop's TLS: a reply put out before
// the handshake waits for it, records decrypt whatever way the network cut
// them, and close_notify is told from garbage.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include "middleware/tls/memory_tls.h"
#include "tls_test_peer.h"

namespace rftp::middleware::tls {
namespace {

class Memory : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() / ("tls-memory-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        auto files = testing::make_certificate(dir_, "server");
        server_ = *make_server_context({files.certificate, files.key});
        client_ = *make_client_context({.ca_file = files.certificate});
        tls_ = std::make_unique<MemoryTls>(*MemoryTls::accept(server_.get()));
        auto [c, s] = testing::socket_pair();
        client_fd_ = std::move(c);
        network_ = std::move(s);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // The loop's part: what the network brought goes in, byte by byte (the
    // worst cut), and what TLS made goes out.
    Status pump_once(std::string &plain) {
        char buf[4096];
        pollfd p{network_.get(), POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) return {};
        ssize_t n = ::read(network_.get(), buf, sizeof buf);
        for (ssize_t i = 0; i < n; ++i)
            if (auto ok = tls_->take_in(std::string_view(buf + i, 1), plain); !ok) return ok;
        std::string out = tls_->drain();
        if (!out.empty()) {
            EXPECT_EQ(::write(network_.get(), out.data(), out.size()), static_cast<ssize_t>(out.size()));
        }
        return {};
    }

    std::filesystem::path dir_;
    SharedSslCtx server_, client_;
    std::unique_ptr<MemoryTls> tls_;
    UniqueFd client_fd_, network_;
};

TEST_F(Memory, AGreetingPutOutBeforeTheHandshakeComesAfterIt) {
    ASSERT_TRUE(tls_->put_out("220 ready\r\n"));
    EXPECT_TRUE(tls_->drain().empty());  // nothing may leave in clear
    auto client = new_client_connection(client_.get(), "localhost");
    Status shaken;
    std::thread t([&] { shaken = handshake(client->get(), client_fd_.get(), 5000); });
    std::string plain;
    for (int i = 0; i < 100 && !tls_->handshake_done(); ++i) ASSERT_TRUE(pump_once(plain));
    t.join();
    ASSERT_TRUE(shaken) << shaken.error().message;
    ASSERT_TRUE(pump_once(plain));
    char got[64] = {};
    ASSERT_GT(SSL_read(client->get(), got, sizeof got), 0);
    EXPECT_STREQ(got, "220 ready\r\n");

    SSL_write(client->get(), "USER alice\r\n", 12);
    for (int i = 0; i < 10 && plain.empty(); ++i) ASSERT_TRUE(pump_once(plain));
    EXPECT_EQ(plain, "USER alice\r\n");
    SSL_shutdown(client->get());
    for (int i = 0; i < 10 && !tls_->peer_closed(); ++i) ASSERT_TRUE(pump_once(plain));
    EXPECT_TRUE(tls_->peer_closed());
}

TEST_F(Memory, GarbageIsAnErrorNotAClose) {
    std::string plain;
    auto r = tls_->take_in("GET / HTTP/1.1\r\n\r\n", plain);
    EXPECT_FALSE(r);
    EXPECT_FALSE(tls_->peer_closed());
    EXPECT_TRUE(plain.empty());
}

TEST(ServerContext, BadFilesAreNamedWithWhatIsWrong) {
    auto dir = std::filesystem::temp_directory_path() / ("tls-context-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto expired = testing::make_certificate(dir, "expired", -3, -1);
    auto future = testing::make_certificate(dir, "future", 1, 3);
    auto good = testing::make_certificate(dir, "good");
    auto r = make_server_context({expired.certificate, expired.key});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("expired.pem has expired"), std::string::npos) << r.error().message;
    r = make_server_context({future.certificate, future.key});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("future.pem is not valid yet"), std::string::npos) << r.error().message;
    r = make_server_context({good.certificate, future.key});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("future.key"), std::string::npos) << r.error().message;
    r = make_server_context({(dir / "none.pem").string(), good.key});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("none.pem: cannot read it"), std::string::npos) << r.error().message;
    EXPECT_TRUE(make_server_context({good.certificate, good.key}));
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rftp::middleware::tls
