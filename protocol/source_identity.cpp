#include "protocol/source_identity.h"

#include <cstdio>

namespace rftp::ftp {

namespace {

std::string seconds_and_nanos(const timespec &t) {
    char nanos[16];
    std::snprintf(nanos, sizeof nanos, "%09ld", static_cast<long>(t.tv_nsec));
    return std::to_string(static_cast<long long>(t.tv_sec)) + "." + nanos;
}

}  // namespace

std::string source_token(uint64_t size, const timespec &modified, const timespec &changed) {
    return std::to_string(size) + ":" + seconds_and_nanos(modified) + ":" + seconds_and_nanos(changed);
}

bool valid_source_token(std::string_view token) {
    if (token.empty() || token.size() > kMaxSourceToken) return false;
    for (char c : token) {
        bool ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '.' || c == ':' ||
                  c == '_' || c == '+' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace rftp::ftp
