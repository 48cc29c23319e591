#include "daemon/config/options.h"

#include <arpa/inet.h>

namespace rftp::daemon {
namespace {

bool is_loopback(const std::string &address) {
    in_addr v4{};
    if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace

bool requires_tls(const ListenAddress &listener) {
    return listener.implicit_tls || (!listener.allow_plaintext && !is_loopback(listener.address));
}

}  // namespace rftp::daemon
