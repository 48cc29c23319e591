// The one-reply file operations: mkdir (MKD), rm (DELE or RMD), mv
// (RNFR/RNTO) and hash (HASH). Each is a session, a command or two, QUIT.
#include <cstdio>

#include "client/commands/commands.h"
#include "client/commands/transfer_steps.h"
#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "client/session.h"

namespace rftp::client {
namespace {

OutcomeStatus one_command(CommandContext &ctx, const std::string &line, const std::string &what) {
    auto session = open_session(ctx.url, ctx.options);
    if (!session) return std::unexpected(session.error());
    auto reply = session->control.command(line);
    if (!reply) return std::unexpected(reply.error());
    if (!reply->positive_completion()) return refused(what, *reply);
    close_session(*session);
    return {};
}

}  // namespace

OutcomeStatus run_mkdir(CommandContext &ctx) {
    return one_command(ctx, "MKD " + ctx.url.path, "mkdir " + ctx.url.path);
}

OutcomeStatus run_rm(CommandContext &ctx) {
    if (ctx.options.remove_dir) return one_command(ctx, "RMD " + ctx.url.path, "rm -d " + ctx.url.path);
    return one_command(ctx, "DELE " + ctx.url.path, "rm " + ctx.url.path);
}

OutcomeStatus run_mv(CommandContext &ctx) {
    const std::string &from = ctx.url.path;
    std::string to = ctx.options.new_path;
    // A relative NEWPATH renames within the source's directory, like mv(1) in that directory.
    // A trailing '/' (a directory's URL) is not where its name ends.
    if (!to.starts_with('/')) {
        std::string source = from;
        while (source.size() > 1 && source.ends_with('/')) source.pop_back();
        to = source.substr(0, source.rfind('/') + 1) + to;
    }
    auto session = open_session(ctx.url, ctx.options);
    if (!session) return std::unexpected(session.error());
    auto rnfr = session->control.command("RNFR " + from);
    if (!rnfr) return std::unexpected(rnfr.error());
    if (rnfr->code != 350) return refused("mv " + from, *rnfr);
    auto rnto = session->control.command("RNTO " + to);
    if (!rnto) return std::unexpected(rnto.error());
    if (!rnto->positive_completion()) return refused("mv " + from + " " + to, *rnto);
    close_session(*session);
    return {};
}

OutcomeStatus run_hash(CommandContext &ctx) {
    auto session = open_session(ctx.url, ctx.options);
    if (!session) return std::unexpected(session.error());
    auto digest = remote_sha256(*session, ctx.url.path);
    if (!digest) return fail_as(digest.error().exit, "hash " + ctx.url.path + ": " + digest.error().message);
    if (ctx.options.json) emit_json_event({{"event", "hash"}, {"algorithm", "SHA-256"}, {"digest", *digest}, {"path", ctx.url.path}});
    else print_to_stdout(*digest + "  " + ctx.url.path + "\n");
    flush_stdout();
    close_session(*session);
    return {};
}

}  // namespace rftp::client
