// rftp put LOCAL URL: one session, one file, moved by put_one_file. Several
// sources or -r go to run_put_many, which moves each file the same way.
#include "client/commands/commands.h"
#include "client/commands/many_files.h"
#include "client/commands/resume_command.h"
#include "client/commands/put_one_file.h"
#include "client/commands/transfer_steps.h"
#include "common/path_text.h"

namespace rftp::client {

OutcomeStatus run_put(CommandContext &ctx) {
    const Options &o = ctx.options;
    if (o.many_files()) return run_put_many(ctx);
    std::string remote = ctx.url.path;
    if (remote.ends_with('/')) remote += basename_of(o.local);
    // Opened before connecting: a bad source fails with nothing sent.
    auto source = open_upload_source(o.local, o.size);
    if (!source) return std::unexpected(source.error());
    // Known before connecting: a server without HASH must not turn it into exit 7.
    if (o.verify && source->device) return refuse_verify_of_device("source");

    auto session = open_session(ctx.url, o);
    if (!session) return std::unexpected(session.error());
    if (auto ok = prepare_transfer_session(*session, o); !ok) return ok;
    // A device read for --size bytes is not resumed: /dev/urandom would not
    // give the same bytes again (get sets no hint for a device either).
    if (!source->device) ctx.summary.resume_hint = resume_command("put", o, {o.local, o.url});

    FileReport report;
    auto sent = put_one_file(*session, o, *source, remote, FileProgressHooks{ctx.progress_view, nullptr}, report);
    ctx.summary.bytes = report.bytes;
    ctx.summary.streams = report.streams;
    ctx.summary.transport = report.transport;
    ctx.summary.notice = report.notice;
    record_protection(ctx.summary, *session, report);
    ctx.summary.transfer_seconds = report.transfer_seconds;
    ctx.summary.notes.insert(ctx.summary.notes.end(), report.notes.begin(), report.notes.end());
    if (!sent) return sent;
    ctx.summary.resume_hint.clear();
    close_session(*session);
    return {};
}

}  // namespace rftp::client
