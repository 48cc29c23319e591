// A TCP listener on 127.0.0.1 at a port the kernel chose, for tests that
// need real connections.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cstdint>

#include "common/unique_fd.h"

struct LoopbackListener {
    rftp::UniqueFd fd{::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    sockaddr_in address{};

    explicit LoopbackListener(int backlog) {
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        EXPECT_EQ(::listen(fd.get(), backlog), 0);
        socklen_t len = sizeof address;
        ::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&address), &len);
    }

    uint16_t port() const { return ntohs(address.sin_port); }
};
