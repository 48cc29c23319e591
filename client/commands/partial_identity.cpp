#include "client/commands/partial_identity.h"

#include "protocol/mlsx_facts.h"

namespace rftp::client {

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

}  // namespace rftp::client
