#include "client/sync/file_times.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "protocol/time_val.h"

namespace rftp::client {

OutcomeStatus set_remote_mtime(Session &session, const std::string &path, int64_t seconds) {
    const std::string verb = session.features.mfmt ? "MFMT " : "MDTM ";
    const std::string line = verb + ftp::format_time_val(seconds) + " " + path;
    auto reply = session.control.command(line);
    if (!reply) return fail_as(reply.error().exit, line + ": " + reply.error().message);
    if (!reply->positive_completion()) return refused("set the time of " + path, *reply);
    return {};
}

Outcome<std::optional<int64_t>> remote_mtime(Session &session, const std::string &path) {
    auto reply = session.control.command("MDTM " + path);
    if (!reply) return fail_as(reply.error().exit, "MDTM " + path + ": " + reply.error().message);
    if (reply->code != 213) return std::optional<int64_t>{};
    auto t = ftp::parse_time_val(reply->text());
    if (!t) return std::optional<int64_t>{};
    return std::optional<int64_t>{t->seconds};
}

OutcomeStatus set_local_mtime(const std::string &path, int64_t seconds) {
    const struct timespec times[2] = {{0, UTIME_OMIT}, {static_cast<time_t>(seconds), 0}};
    if (::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
        return fail_as(ExitCode::local_file, "cannot set the time of " + path + ": " + std::strerror(errno));
    return {};
}

}  // namespace rftp::client
