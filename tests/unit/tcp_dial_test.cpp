#include "client/tcp_dial.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/loopback_listener.h"

using rftp::UniqueFd;
using rftp::client::ExitCode;
using rftp::client::tcp_dial_together;

namespace {

uint16_t local_port(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len);
    return ntohs(a.sin_port);
}

uint16_t peer_port(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getpeername(fd, reinterpret_cast<sockaddr *>(&a), &len);
    return ntohs(a.sin_port);
}

}  // namespace

TEST(TcpDialTogether, OpensEveryConnectionReadyForUse) {
    LoopbackListener listener(16);
    auto socks = tcp_dial_together("127.0.0.1", listener.port(), 8, 5);
    ASSERT_TRUE(socks) << socks.error().message;
    ASSERT_EQ(socks->size(), 8u);
    for (const auto &s : *socks) {
        EXPECT_EQ(peer_port(s.get()), listener.port());
        EXPECT_EQ(::fcntl(s.get(), F_GETFL) & O_NONBLOCK, 0);  // blocking, as the engine expects
        int nodelay = 0;
        socklen_t len = sizeof nodelay;
        ::getsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &nodelay, &len);
        EXPECT_NE(nodelay, 0);
    }
    // Each is a connection of its own, accepted at the other end.
    for (int i = 0; i < 8; ++i) {
        UniqueFd accepted(::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        ASSERT_TRUE(accepted);
        const uint16_t from = peer_port(accepted.get());
        int matches = 0;
        for (const auto &s : *socks) matches += local_port(s.get()) == from;
        EXPECT_EQ(matches, 1);
    }
}

TEST(TcpDialTogether, ARefusedConnectionFailsThemAllAndSaysWhich) {
    uint16_t closed_port = 0;
    {
        LoopbackListener gone(1);  // its port, free again once closed
        closed_port = gone.port();
    }
    auto socks = tcp_dial_together("127.0.0.1", closed_port, 3, 5);
    ASSERT_FALSE(socks);
    EXPECT_EQ(socks.error().exit, ExitCode::connection);
    EXPECT_NE(socks.error().message.find("data connection "), std::string::npos) << socks.error().message;
    EXPECT_NE(socks.error().message.find("/3: 127.0.0.1 port " + std::to_string(closed_port)), std::string::npos)
        << socks.error().message;
    EXPECT_NE(socks.error().message.find("Connection refused"), std::string::npos) << socks.error().message;
}
