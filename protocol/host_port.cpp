#include "protocol/host_port.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <array>
#include <charconv>
#include <vector>

#include "common/decimal.h"

namespace rftp::ftp {
namespace {

bool parse_uint(std::string_view s, unsigned max, unsigned &out) {
    auto value = parse_decimal(s, max);
    if (value) out = static_cast<unsigned>(*value);
    return value.has_value();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    for (;;) {
        std::size_t pos = s.find(sep, start);
        parts.push_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
        if (pos == std::string_view::npos) return parts;
        start = pos + 1;
    }
}

Result<Endpoint> six_numbers(std::string_view s) {
    auto parts = split(s, ',');
    if (parts.size() != 6) return fail_msg("Expected h1,h2,h3,h4,p1,p2.");
    std::array<unsigned, 6> v{};
    for (int i = 0; i < 6; ++i)
        if (!parse_uint(parts[i], 255, v[i])) return fail_msg("Each of h1..p2 must be 0-255.");
    Endpoint ep;
    ep.family = AF_INET;
    ep.host = std::to_string(v[0]) + "." + std::to_string(v[1]) + "." + std::to_string(v[2]) +
              "." + std::to_string(v[3]);
    ep.port = static_cast<uint16_t>(v[4] * 256 + v[5]);
    return ep;
}

}  // namespace

Result<Endpoint> parse_port_argument(std::string_view arg) { return six_numbers(arg); }

Result<Endpoint> parse_eprt_argument(std::string_view arg) {
    if (arg.size() < 8) return fail_msg("Expected |proto|address|port|.");
    char d = arg[0];
    if (d < 33 || d > 126) return fail_msg("Bad EPRT delimiter.");
    auto parts = split(arg, d);
    // "|1|addr|port|" splits into "", "1", "addr", "port", "".
    if (parts.size() != 5 || !parts[0].empty() || !parts[4].empty())
        return fail_msg("Expected |proto|address|port|.");
    Endpoint ep;
    if (parts[1] == "1") ep.family = AF_INET;
    else if (parts[1] == "2") ep.family = AF_INET6;
    else return fail_msg("Network protocol not supported, use (1,2)", 522);
    ep.host = std::string(parts[2]);
    unsigned char buf[sizeof(in6_addr)];
    if (ep.host.size() > INET6_ADDRSTRLEN || inet_pton(ep.family, ep.host.c_str(), buf) != 1)
        return fail_msg("Bad network address.");
    unsigned port = 0;
    if (!parse_uint(parts[3], 65535, port) || port == 0) return fail_msg("Bad port number.");
    ep.port = static_cast<uint16_t>(port);
    return ep;
}

std::string format_pasv_text(const Endpoint &ep) {
    std::string h = ep.host;
    for (char &c : h)
        if (c == '.') c = ',';
    return "Entering Passive Mode (" + h + "," + std::to_string(ep.port / 256) + "," +
           std::to_string(ep.port % 256) + ").";
}

std::string format_epsv_text(uint16_t port) {
    return "Entering Extended Passive Mode (|||" + std::to_string(port) + "|).";
}

Result<Endpoint> parse_pasv_reply(std::string_view text) {
    std::size_t open = text.find('(');
    std::size_t close = text.find(')', open == std::string_view::npos ? 0 : open);
    if (open != std::string_view::npos && close != std::string_view::npos)
        return six_numbers(text.substr(open + 1, close - open - 1));
    // Some servers omit the parentheses: take the first run of digits and commas.
    std::size_t b = text.find_first_of("0123456789");
    if (b == std::string_view::npos) return fail_msg("No address in PASV reply.");
    std::size_t e = text.find_first_not_of("0123456789,", b);
    return six_numbers(text.substr(b, e == std::string_view::npos ? e : e - b));
}

Result<uint16_t> parse_epsv_reply(std::string_view text) {
    std::size_t open = text.find('(');
    std::size_t close = text.find(')', open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos || close - open < 6)
        return fail_msg("No (|||port|) in EPSV reply.");
    std::string_view inner = text.substr(open + 1, close - open - 1);
    char d = inner[0];
    if (inner.size() < 5 || inner[1] != d || inner[2] != d || inner.back() != d)
        return fail_msg("Malformed EPSV reply.");
    unsigned port = 0;
    if (!parse_uint(inner.substr(3, inner.size() - 4), 65535, port) || port == 0)
        return fail_msg("Bad port in EPSV reply.");
    return static_cast<uint16_t>(port);
}

}  // namespace rftp::ftp
