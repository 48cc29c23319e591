// rftp get [-r] URL... LOCALDIR: every remote file goes into the existing
// local directory under its basename; -r lists remote directories (MLSD or
// LIST) and recreates their trees there. All URLs must name one server.
#include <sys/stat.h>

#include <cstdint>

#include "client/batch/batch_run.h"
#include "client/batch/download_plan.h"
#include "client/commands/files_ahead.h"
#include "client/commands/get_one_file.h"
#include "client/commands/many_files.h"
#include "client/commands/resume_command.h"

namespace rftp::client {
namespace {

// Every URL's path, after checking they all name the server ctx.url names
// (the sessions are shared by all files).
Outcome<std::vector<std::string>> remote_paths(const CommandContext &ctx) {
    std::vector<std::string> paths;
    for (const auto &text : ctx.options.urls) {
        auto url = parse_url(text);
        if (!url) return fail_as(ExitCode::usage, url.error().message);
        if (url->scheme != ctx.url.scheme || url->host != ctx.url.host || url->port != ctx.url.port ||
            url->user != ctx.url.user)
            return fail_as(ExitCode::usage, "all URLs of one get must name the same server and user: " + text);
        paths.push_back(url->path);
    }
    return paths;
}

}  // namespace

OutcomeStatus run_get_many(CommandContext &ctx) {
    const Options &o = ctx.options;
    if (o.local == "-") return fail_as(ExitCode::usage, "several files cannot go to stdout; give a local directory");
    struct stat st {};
    if (::stat(o.local.c_str(), &st) < 0 || !S_ISDIR(st.st_mode))
        return fail_as(ExitCode::usage, o.local + " must be an existing directory to receive several files");
    auto paths = remote_paths(ctx);
    if (!paths) return std::unexpected(paths.error());

    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    // Without -r the files are the URLs given; a tree's are known only
    // once listed.
    SessionsLoggingIn others(ctx, o.recursive ? SIZE_MAX : paths->size());
    auto plan = plan_download(*session, *paths, o.recursive, o.local);
    if (!plan) return std::unexpected(plan.error());
    BatchRun batch(ctx);
    batch.take_sessions_from(others);
    for (auto &[job, failure] : plan->failures) batch.record_failure(job, failure);
    if (batch.stopped()) {
        batch.count_unattempted(plan->files.size());
        close_session(*session);
        return batch.conclude();
    }

    std::vector<std::string> args(o.urls.begin(), o.urls.end());
    args.push_back(o.local);
    ctx.summary.resume_hint = resume_command("get", o, args);
    batch.run(std::move(plan->files), std::move(*session),
              [&o](Session &s, const FileJob &job, const FileProgressHooks &hooks, FileReport &report) -> OutcomeStatus {
                  auto dest = destination_at(job.local);
                  if (!dest) return std::unexpected(dest.error());
                  // A FIFO would block the session until read, a device would
                  // swallow the file: many files land only in plain files.
                  if (dest->direct)
                      return fail_as(ExitCode::local_file, job.local + " exists and is not a regular file; "
                                                           "a many-file get writes only plain files");
                  return get_one_file(s, o, job.remote, *dest, hooks, report, ListedFacts{job.size, job.modify});
              },
              [&o](Session &s, const FileJob &current, const FileJob &next) { return send_get_ahead(s, o, current, next); },
              [&o](const Session &s) { return get_ahead_window(s, o); });
    return batch.conclude();
}

}  // namespace rftp::client
