// Small helpers for IPv4/IPv6 socket addresses held in a sockaddr_storage,
// shared by the daemon's data connections and the RDMA connection setup.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>

namespace rftp {

// The length bind(), connect() and friends expect for a's family.
inline socklen_t address_length(const sockaddr_storage &a) {
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

// a with its port set to port.
inline sockaddr_storage with_port(sockaddr_storage a, uint16_t port) {
    if (a.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6 &>(a).sin6_port = htons(port);
    else reinterpret_cast<sockaddr_in &>(a).sin_port = htons(port);
    return a;
}

}  // namespace rftp
