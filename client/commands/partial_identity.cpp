#include "client/commands/partial_identity.h"

#include <sys/xattr.h>

#include <cctype>

namespace rftp::client {
namespace {

constexpr const char *kAttribute = "user.rftp.source";
constexpr std::size_t kSecondsDigits = 14;  // YYYYMMDDHHMMSS

// "20240131120501.123" -> "20240131120501"; nullopt when not a time-val.
std::optional<std::string> to_seconds(const std::string &time_val) {
    if (time_val.size() < kSecondsDigits) return std::nullopt;
    for (std::size_t i = 0; i < kSecondsDigits; ++i)
        if (!std::isdigit(static_cast<unsigned char>(time_val[i]))) return std::nullopt;
    return time_val.substr(0, kSecondsDigits);
}

}  // namespace

std::optional<std::string> partial_identity(std::optional<uint64_t> size, const std::optional<std::string> &modify) {
    if (!modify || !size) return std::nullopt;
    return "size=" + std::to_string(*size) + " modify=" + *modify;
}

Outcome<std::optional<std::string>> remote_modify_time(Session &session, const std::string &path,
                                                       const std::optional<std::string> &listed) {
    if (listed) return to_seconds(*listed);
    if (!session.features.mdtm) return std::optional<std::string>{};
    auto reply = session.control.command("MDTM " + path);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 213) return std::optional<std::string>{};  // asked for its size next, which says why
    return to_seconds(reply->text());
}

std::optional<std::string> recorded_identity(int fd) {
    char value[128];
    ssize_t n = ::fgetxattr(fd, kAttribute, value, sizeof value);
    if (n <= 0) return std::nullopt;
    return std::string(value, static_cast<std::size_t>(n));
}

void record_identity(int fd, const std::string &identity) {
    (void)::fsetxattr(fd, kAttribute, identity.data(), identity.size(), 0);
}

void forget_identity(const std::string &path) { (void)::removexattr(path.c_str(), kAttribute); }

}  // namespace rftp::client
