#include "client/commands/partial_identity.h"

#include <sys/xattr.h>

#include "protocol/mlsx_facts.h"

namespace rftp::client {
namespace {

constexpr const char *kAttribute = "user.rftp.source";

}  // namespace

std::optional<std::string> partial_identity(std::optional<uint64_t> size, const std::optional<std::string> &modify) {
    if (!modify || !size) return std::nullopt;
    return "size=" + std::to_string(*size) + " modify=" + *modify;
}

Outcome<std::optional<std::string>> remote_modify_time(Session &session, const std::string &path,
                                                       const std::optional<std::string> &listed) {
    if (listed) return ftp::time_val_seconds(*listed);
    if (!session.features.mdtm) return std::optional<std::string>{};
    auto reply = session.control.command("MDTM " + path);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code != 213) return std::optional<std::string>{};  // asked for its size next, which says why
    return ftp::time_val_seconds(reply->text());
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
