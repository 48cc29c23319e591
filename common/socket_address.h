// Small helpers for IPv4/IPv6 socket addresses held in a sockaddr_storage,
// shared by the daemon's data connections and the RDMA connection setup.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <string>

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

// "1.2.3.4" / "::1" of an address, for logs and comparisons (an IPv4-mapped
// IPv6 address as its IPv4 one).
std::string address_text(const sockaddr_storage &addr);
// A numeric address in 127.0.0.0/8 or ::1: traffic to it never leaves the machine.
bool is_loopback_address(const std::string &text);
// A numeric address as address_text writes it ("2001:DB8::1" and
// "::ffff:192.0.2.7" become "2001:db8::1" and "192.0.2.7"); other text as given.
std::string canonical_address_text(const std::string &text);

}  // namespace rftp
