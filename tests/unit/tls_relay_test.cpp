// The relay (tls_relay.h): bytes both ways between a plain socket and TLS,
// close_notify as end of stream, and a TLS stream cut without close_notify
// told apart from a clean end. Which directions the kernel carries (kTLS)
// is tested where a kernel has it: tests/rdma/guest/test_ktls.py.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "middleware/tcp/socket_io.h"
#include "middleware/tls/tls_relay.h"
#include "tls_test_peer.h"

namespace rftp::middleware::tls {
namespace {

class Relay : public ::testing::Test {
protected:
    void SetUp() override {
        ::signal(SIGPIPE, SIG_IGN);  // as rftpd and rftp do (tls_relay.h)
        dir_ = std::filesystem::temp_directory_path() / ("tls-relay-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        auto files = testing::make_certificate(dir_, "server");
        server_ = *make_server_context({files.certificate, files.key});
        client_ = *make_client_context({.ca_file = files.certificate});
        auto [c, s] = testing::socket_pair();
        UniqueSsl server(SSL_new(server_.get()));
        SSL_set_accept_state(server.get());
        SSL_set_num_tickets(server.get(), 0);
        auto h = testing::handshake_pair(std::move(*new_client_connection(client_.get(), "localhost")), c.get(),
                                         std::move(server), s.get());
        ASSERT_TRUE(h.client_result && h.server_result);
        // The client side is a relay too: both engines see plain sockets.
        client_relay_ = std::move(*TlsRelay::start(std::move(h.client), std::move(c), 30));
        if (!relay_on_both_sides()) {
            raw_server_ = std::move(h.server);
            raw_server_fd_ = std::move(s);
            return;
        }
        server_relay_ = std::move(*TlsRelay::start(std::move(h.server), std::move(s), 30));
    }
    // false: the server's side stays a bare TLS connection (raw_server_).
    virtual bool relay_on_both_sides() const { return true; }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    static std::string read_to_end(int fd) {
        std::string out;
        char buf[65536];
        for (;;) {
            auto n = read_full(fd, buf, sizeof buf);
            if (!n || *n == 0) return out;
            out.append(buf, *n);
        }
    }

    std::filesystem::path dir_;
    SharedSslCtx server_, client_;
    std::unique_ptr<TlsRelay> client_relay_, server_relay_;
    UniqueSsl raw_server_;
    UniqueFd raw_server_fd_;
};

class RelayToBarePeer : public Relay {
protected:
    bool relay_on_both_sides() const override { return false; }
};

TEST_F(Relay, BytesCrossBothWaysAndAnEndIsCloseNotify) {
    const std::string up(3 << 20, 'u'), down = "listing\r\n";
    Status finished;
    std::thread sender([&] {
        ASSERT_TRUE(write_all(client_relay_->engine_fd(), up.data(), up.size()));
        finished = client_relay_->finish(5000);
    });
    EXPECT_EQ(read_to_end(server_relay_->engine_fd()), up);
    sender.join();
    EXPECT_TRUE(finished) << finished.error().message;
    EXPECT_FALSE(server_relay_->cut_short());
    ASSERT_TRUE(write_all(server_relay_->engine_fd(), down.data(), down.size()));
    auto done = server_relay_->finish(5000);
    EXPECT_TRUE(done) << done.error().message;
    EXPECT_EQ(read_to_end(client_relay_->engine_fd()), down);
    EXPECT_FALSE(client_relay_->cut_short());
}

TEST_F(Relay, AnEngineThatEndsByItselfSendsNoCloseNotify) {
    // An interrupt shuts the engine's socket down: that must not look, to
    // the peer, like the end of a good transfer.
    const std::string part(50000, 'i');
    ASSERT_TRUE(write_all(client_relay_->engine_fd(), part.data(), part.size()));
    ::shutdown(client_relay_->engine_fd(), SHUT_RDWR);
    char buf[65536];
    std::size_t got = 0;
    while (got < part.size()) {
        auto n = read_full(server_relay_->engine_fd(), buf, std::min(sizeof buf, part.size() - got));
        ASSERT_TRUE(n && *n > 0);
        got += *n;
    }
    client_relay_.reset();  // the transfer gives up: the TCP connection ends
    EXPECT_EQ(read_to_end(server_relay_->engine_fd()), "");
    EXPECT_TRUE(server_relay_->cut_short());
}

TEST_F(Relay, AStreamCutWithoutCloseNotifyIsToldApart) {
    const std::string part(100000, 'p');
    ASSERT_TRUE(write_all(client_relay_->engine_fd(), part.data(), part.size()));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // on its way
    client_relay_->stop();  // an abort: the TCP connection ends, TLS never said so
    client_relay_.reset();
    EXPECT_EQ(read_to_end(server_relay_->engine_fd()), part);
    EXPECT_TRUE(server_relay_->cut_short());
    EXPECT_NE(server_relay_->failure().find("close_notify"), std::string::npos) << server_relay_->failure();
}

TEST_F(Relay, ConnectionsTheKernelWasNotOfferedStayWithOpenSsl) {
    // The handshake here never asked for kTLS (offer_kernel_tls): OpenSSL
    // makes and reads every record, whatever the kernel has.
    EXPECT_EQ(client_relay_->kernel_tls().name(), "relay");
    std::vector<std::unique_ptr<TlsRelay>> both;
    both.push_back(std::move(client_relay_));
    both.push_back(std::move(server_relay_));
    EXPECT_EQ(tls_path_of(both), "relay");
    EXPECT_EQ(tls_path_of({}), "");
}

TEST_F(RelayToBarePeer, FinishWaitsUntilThePeerTookEveryByte) {
    // Closing while bytes are still the kernel's could cut them off (a
    // reset throws away what is unsent), so finish() waits for the peer.
    // On this Unix socket pair the peer takes bytes by reading them; over
    // TCP its kernel acknowledges them.
    auto &relay = client_relay_;
    // Small enough for the socket's buffer: close_notify goes out at once.
    const std::string up(100000, 'u');
    ASSERT_TRUE(write_all(relay->engine_fd(), up.data(), up.size()));
    std::atomic<bool> returned{false};
    Status finished;
    std::thread finishing([&] {
        finished = relay->finish(10000);
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(returned.load()) << "finish() returned while the peer had read nothing";
    ::fcntl(raw_server_fd_.get(), F_SETFL, ::fcntl(raw_server_fd_.get(), F_GETFL) & ~O_NONBLOCK);
    std::string got;
    char buf[16384];
    for (int n; (n = SSL_read(raw_server_.get(), buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    EXPECT_EQ(got, up);
    EXPECT_TRUE(SSL_get_shutdown(raw_server_.get()) & SSL_RECEIVED_SHUTDOWN) << "the stream ended with close_notify";
    finishing.join();
    EXPECT_TRUE(finished) << finished.error().message;
}

TEST(KernelTlsName, SaysWhichDirectionsTheKernelCarries) {
    EXPECT_EQ((KernelTls{.send = true, .receive = true}).name(), "ktls");
    EXPECT_EQ((KernelTls{.send = true, .receive = false}).name(), "ktls_send");
    EXPECT_EQ((KernelTls{.send = false, .receive = true}).name(), "ktls_receive");
    EXPECT_EQ(KernelTls{}.name(), "relay");
}

}  // namespace
}  // namespace rftp::middleware::tls
