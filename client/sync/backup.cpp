#include "client/sync/backup.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "client/batch/remote_tree.h"
#include "client/commands/transfer_steps.h"
#include "client/sync/tree.h"

namespace rftp::client {
namespace {

OutcomeStatus make_parents(Session *session, const std::string &path) {
    const std::string parent = std::filesystem::path(path).parent_path().generic_string();
    if (!session) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
        if (ec) return fail_as(ExitCode::local_file, "cannot make directory " + parent + ": " + ec.message());
        return {};
    }
    std::filesystem::path so_far;
    for (const auto &part : std::filesystem::path(parent)) {
        so_far /= part;
        if (part == "/" || part.empty()) continue;
        if (auto made = ensure_remote_directory(*session, so_far.generic_string()); !made) return made;
    }
    return {};
}

// A file already gone (an earlier attempt backed it up, then its copy
// failed) is nothing to back up: SIZE refused too says it is not there.
OutcomeStatus rename_remote(Session &session, const std::string &from, const std::string &to) {
    auto rnfr = session.control.command("RNFR " + from);
    if (!rnfr) return std::unexpected(rnfr.error());
    if (rnfr->code != 350) {
        auto there = probe_size(session, from);
        if (!there) return std::unexpected(there.error());
        if (!there->size) return {};
        return refused("back up " + from, *rnfr);
    }
    auto rnto = session.control.command("RNTO " + to);
    if (!rnto) return std::unexpected(rnto.error());
    if (!rnto->positive_completion()) return refused("back up " + from + " to " + to, *rnto);
    return {};
}

}  // namespace

std::string backup_top(const std::string &backup_dir, const std::string &destination_top) {
    return backup_dir.starts_with('/') ? backup_dir : path_under(destination_top, backup_dir);
}

std::optional<std::string> backup_inside_tree(const std::string &backup_dir, const std::string &destination_top) {
    // Both absolute (a local top may be given relative), so they compare.
    const auto top = std::filesystem::absolute(destination_top).lexically_normal();
    const auto dir = std::filesystem::absolute(backup_top(backup_dir, destination_top)).lexically_normal();
    const auto relative = dir.lexically_relative(top);
    if (relative.empty() || relative == "." || *relative.begin() == "..") return std::nullopt;
    return relative.generic_string();
}

OutcomeStatus back_up(Session *session, const std::string &destination_top, const std::string &backup_dir,
                      const std::string &relative) {
    const std::string from = path_under(destination_top, relative);
    const std::string to = path_under(backup_top(backup_dir, destination_top), relative);
    if (auto made = make_parents(session, to); !made) return made;
    if (session) return rename_remote(*session, from, to);
    if (std::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT)  // ENOENT: already backed up
        return fail_as(ExitCode::local_file, "cannot back up " + from + " to " + to + ": " + std::strerror(errno));
    return {};
}

}  // namespace rftp::client
