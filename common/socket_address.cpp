#include "common/socket_address.h"

namespace rftp {

std::string address_text(const sockaddr_storage &addr) {
    char buf[INET6_ADDRSTRLEN] = "?";
    if (addr.ss_family == AF_INET)
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in &>(addr).sin_addr, buf, sizeof buf);
    else if (addr.ss_family == AF_INET6)
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6 &>(addr).sin6_addr, buf, sizeof buf);
    std::string s = buf;
    if (s.rfind("::ffff:", 0) == 0 && s.find('.') != std::string::npos) s = s.substr(7);
    return s;
}

std::string canonical_address_text(const std::string &text) {
    sockaddr_storage addr{};
    if (inet_pton(AF_INET, text.c_str(), &reinterpret_cast<sockaddr_in &>(addr).sin_addr) == 1)
        addr.ss_family = AF_INET;
    else if (inet_pton(AF_INET6, text.c_str(), &reinterpret_cast<sockaddr_in6 &>(addr).sin6_addr) == 1)
        addr.ss_family = AF_INET6;
    else
        return text;
    return address_text(addr);
}

bool is_loopback_address(const std::string &text) {
    in_addr v4{};
    if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return ::inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace rftp
