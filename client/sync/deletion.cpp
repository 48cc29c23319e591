#include "client/sync/deletion.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "client/interrupt.h"
#include "client/progress/json_events.h"
#include "client/sync/backup.h"
#include "common/log.h"

namespace rftp::client {
namespace {

OutcomeStatus remove_one(std::optional<Session> &session, bool remote, const std::string &path, bool directory) {
    if (!remote) {
        if ((directory ? ::rmdir(path.c_str()) : ::unlink(path.c_str())) == 0) return {};
        return fail_as(ExitCode::local_file, std::string("cannot delete ") + path + ": " + std::strerror(errno));
    }
    const std::string line = (directory ? "RMD " : "DELE ") + path;
    auto reply = session->control.command(line);
    if (!reply) return fail_as(reply.error().exit, line + ": " + reply.error().message);
    if (!reply->positive_completion()) return refused("delete " + path, *reply);
    return {};
}

void tell(const CommandContext &ctx, const std::string &path, const OutcomeStatus &removed) {
    if (!ctx.options.json) return;
    nlohmann::json ev{{"event", "delete"}, {"path", path}, {"result", removed ? "ok" : "error"}};
    if (!removed) ev["message"] = removed.error().message;
    emit_json_event(ev);
}

}  // namespace

OutcomeStatus check_delete_limit(const Options &o, const Comparison &c) {
    const std::size_t victims = c.plan.count(SyncAction::remove).files;
    if (!o.sync.max_delete || victims == 0) return {};
    const std::size_t present = c.destination.files.size();
    const uint64_t limit = o.sync.max_delete_percent ? present * *o.sync.max_delete / 100 : *o.sync.max_delete;
    if (victims <= limit) return {};
    return fail_as(ExitCode::delete_limit,
                   "--delete would remove " + std::to_string(victims) + " of the destination's " +
                       std::to_string(present) + " files, more than --max-delete " + std::to_string(*o.sync.max_delete) +
                       (o.sync.max_delete_percent ? "%" : "") +
                       " allows; nothing was deleted (see them with --dry-run, then raise the limit)");
}

OutcomeStatus remove_extraneous(const CommandContext &ctx, std::optional<Session> &session, const Comparison &c,
                                std::size_t &deleted) {
    const bool remote = ctx.options.sync.upload;
    OutcomeStatus worst;
    for (const auto &item : c.plan.items) {
        if (item.action != SyncAction::remove) continue;
        if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
        const std::string path = path_under(c.destination_top, item.path);
        auto removed = ctx.options.sync.backup_dir.empty()
                           ? remove_one(session, remote, path, false)
                           : back_up(remote ? &*session : nullptr, c.destination_top, ctx.options.sync.backup_dir, item.path);
        tell(ctx, path, removed);
        if (removed) {
            ++deleted;
            continue;
        }
        if (session_lost(removed.error())) return removed;
        log::error(removed.error().message);
        if (worst || severity(removed.error().exit) > severity(worst.error().exit)) worst = removed;
    }
    for (const auto &dir : c.plan.directories_to_remove) {
        const std::string path = path_under(c.destination_top, dir);
        auto removed = remove_one(session, remote, path, true);
        if (!removed && session_lost(removed.error())) return removed;
        if (!removed) log::warning(removed.error().message + " (it may hold excluded files)");
    }
    return worst;
}

}  // namespace rftp::client
