// rftp get URL LOCAL: one session, one file, moved by get_one_file. Several
// URLs or -r go to run_get_many, which moves each file the same way.
#include "client/commands/commands.h"
#include "client/commands/get_one_file.h"
#include "client/commands/many_files.h"
#include "client/commands/resume_command.h"
#include "client/commands/transfer_steps.h"

namespace rftp::client {

OutcomeStatus run_get(CommandContext &ctx) {
    const Options &o = ctx.options;
    if (o.many_files()) return run_get_many(ctx);
    const std::string &remote = ctx.url.path;
    auto dest = choose_destination(o.local, remote);
    if (!dest) return std::unexpected(dest.error());
    if (dest->direct && o.resume) return fail_as(ExitCode::usage, "-c needs a regular local file to resume into");
    if (o.local == "-" && o.json) return fail_as(ExitCode::usage, "--json and LOCAL '-' both want stdout");
    // Known before connecting: a server without HASH must not turn it into exit 7.
    if (o.verify && dest->direct) return refuse_verify_of_device("download");

    auto session = open_session(ctx.url, o);
    if (!session) return std::unexpected(session.error());
    if (auto ok = prepare_transfer_session(*session, o); !ok) return ok;
    // Stdout or a device keeps no partial file: there is nothing to resume.
    if (!dest->direct) ctx.summary.resume_hint = resume_command("get", o, {o.url, o.local});

    FileReport report;
    auto got = get_one_file(*session, o, remote, *dest, FileProgressHooks{ctx.progress_view, nullptr}, report);
    ctx.summary.bytes = report.bytes;
    ctx.summary.streams = report.streams;
    ctx.summary.transport = report.transport;
    ctx.summary.notice = report.notice;
    record_protection(ctx.summary, *session, report);
    ctx.summary.transfer_seconds = report.transfer_seconds;
    ctx.summary.notes.insert(ctx.summary.notes.end(), report.notes.begin(), report.notes.end());
    if (!got) return got;
    ctx.summary.resume_hint.clear();
    close_session(*session);
    return {};
}

}  // namespace rftp::client
