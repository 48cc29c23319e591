// The address arguments of the data-connection commands: PORT and the 227
// reply of PASV (RFC 959: h1,h2,h3,h4,p1,p2), EPRT and the 229 reply of EPSV
// (RFC 2428: |proto|address|port|, any delimiter in 33..126).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::ftp {

struct Endpoint {
    int family = 0;     // AF_INET or AF_INET6
    std::string host;   // numeric address, e.g. "127.0.0.1" or "::1"
    uint16_t port = 0;
};

Result<Endpoint> parse_port_argument(std::string_view arg);           // PORT
Result<Endpoint> parse_eprt_argument(std::string_view arg);           // EPRT
std::string format_pasv_text(const Endpoint &ep);                     // 227 text
std::string format_epsv_text(uint16_t port);                          // 229 text
Result<Endpoint> parse_pasv_reply(std::string_view text);            // client side
Result<uint16_t> parse_epsv_reply(std::string_view text);            // client side

}  // namespace rftp::ftp
