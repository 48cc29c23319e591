#include "client/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/ascii_case.h"
#include "common/decimal.h"
#include "common/hex.h"

namespace rftp::client {
namespace {

Result<uint16_t> parse_port(std::string_view s) {
    auto value = parse_decimal(s, 65535);
    if (!value || *value == 0) return fail_msg("bad port '" + std::string(s) + "' (expected 1-65535)");
    return static_cast<uint16_t>(*value);
}

}  // namespace

std::string Url::authority() const {
    std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return h + ":" + std::to_string(port);
}

Result<std::string> percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        if (i + 2 >= text.size()) return fail_msg("truncated %-escape");
        int hi = hex_digit_value(text[i + 1]), lo = hex_digit_value(text[i + 2]);
        if (hi < 0 || lo < 0) return fail_msg("bad %-escape '" + std::string(text.substr(i, 3)) + "'");
        char c = static_cast<char>(hi * 16 + lo);
        if (c == '\0') return fail_msg("%00 is not allowed");
        out += c;
        i += 2;
    }
    return out;
}

std::string without_password(std::string_view text) {
    std::size_t sep = text.find("://");
    if (sep == std::string_view::npos) return std::string(text);
    const std::size_t start = sep + 3;
    std::size_t colon = text.find(':', start);
    // The password runs from the user's ':' to the '@' before the host. It
    // may itself hold a '/' (unescaped, as typed), so when the authority
    // (up to the first '/') has no '@', the last '@' of the whole text ends
    // it: hiding too much in a message is better than showing a secret.
    std::size_t end = std::min(text.find('/', start), text.size());
    std::size_t at = text.rfind('@', end == 0 ? 0 : end - 1);
    if (at == std::string_view::npos || at < start) at = text.rfind('@');
    if (colon == std::string_view::npos || at == std::string_view::npos || at < colon) return std::string(text);
    return std::string(text.substr(0, colon + 1)) + "***" + std::string(text.substr(at));
}

Result<Url> parse_url(std::string_view text) {
    auto bad = [&](const std::string &why) {
        return fail_msg("bad URL '" + without_password(text) + "': " + why);
    };
    Url url;
    std::size_t sep = text.find("://");
    if (sep == std::string_view::npos) return bad("expected rftp://host/path, ftp://host/path or ftps://host/path");
    url.scheme = ascii_lower(text.substr(0, sep));
    if (url.scheme == "rftp") url.port = kRftpDefaultPort;
    else if (url.scheme == "ftp") url.port = kFtpDefaultPort;
    else if (url.scheme == "ftps") url.port = kFtpsDefaultPort;
    else return bad("unknown scheme '" + url.scheme + "' (use rftp://, ftp:// or ftps://)");

    std::string_view rest = text.substr(sep + 3);
    std::size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{"/"} : rest.substr(slash);
    if (path.find_first_of("?#") != std::string_view::npos) return bad("'?' and '#' must be written as %3F and %23");

    // The user part ends at the last '@', since a decoded user may not contain
    // one but an undecoded e-mail style login often does ("a@b.c@host").
    std::size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view userinfo = authority.substr(0, at);
        if (userinfo.find(':') != std::string_view::npos)
            return bad("passwords do not belong in URLs; use ~/.netrc, RFTP_PASSWORD or the prompt");
        auto user = percent_decode(userinfo);
        if (!user) return bad(user.error().message);
        if (user->empty()) return bad("empty user name before '@'");
        url.user = std::move(*user);
        authority = authority.substr(at + 1);
    }

    std::string_view port_text;
    bool has_port = false;
    if (!authority.empty() && authority[0] == '[') {
        std::size_t close = authority.find(']');
        if (close == std::string_view::npos) return bad("missing ']' after IPv6 address");
        url.host = std::string(authority.substr(1, close - 1));
        // A zone (fe80::1%eth0) is written %25 in a URL (RFC 6874); a bare %
        // is taken too, as browsers and curl do.
        if (auto zone = url.host.find("%25"); zone != std::string::npos) url.host.erase(zone + 1, 2);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after[0] != ':') return bad("unexpected text after ']'");
            port_text = after.substr(1);
            has_port = true;
        }
        if (url.host.find(':') == std::string::npos) return bad("brackets are for IPv6 addresses only");
    } else {
        std::size_t colon = authority.find(':');
        url.host = std::string(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            has_port = true;
        }
    }
    if (url.host.empty()) return bad("missing host");
    if (has_port) {
        auto port = parse_port(port_text);
        if (!port) return bad(port.error().message);
        url.port = *port;
    }
    auto decoded = percent_decode(path);
    if (!decoded) return bad(decoded.error().message);
    url.path = std::move(*decoded);
    return url;
}

}  // namespace rftp::client
