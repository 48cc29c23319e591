// rftp sync SRC DST: makes DST a copy of SRC, one a local directory and the
// other a URL. Lists both trees, plans (client/sync/sync_plan.h), makes the
// missing directories, copies what is new or changed over --concurrency
// sessions as put -r/get -r do, gives each copy its source's time, then
// with --delete removes what the source lacks, and writes --manifest.
#include "client/batch/batch_run.h"
#include "client/batch/sessions_logging_in.h"
#include "client/commands/commands.h"
#include "client/commands/resume_command.h"
#include "client/commands/sync_planned.h"
#include "client/sync/copy_step.h"
#include "client/sync/deletion.h"
#include "client/sync/files_from.h"
#include "client/sync/job_file.h"
#include "client/sync/job_runner.h"
#include "client/sync/manifest.h"
#include "client/sync/plan_report.h"
#include "client/sync/tree_comparison.h"
#include "common/log.h"

namespace rftp::client {
namespace {

// The command that finishes an interrupted sync: the same one, as typed.
std::string rerun_command(const Options &o) {
    std::string cmd = "rftp";
    for (const auto &a : o.sync.command_line) cmd += " " + shell_quoted(a);
    return cmd;
}

void say_tree_warnings(CommandContext &ctx, const Comparison &c) {
    for (const auto *tree : {&c.source, &c.destination})
        for (const auto &text : tree->skipped) log::warning(text);
    for (const auto &note : c.notes) ctx.note(note);
}

// Copies, then deletes, then the manifest; session is the one planning used,
// others those logging in meanwhile, if any.
OutcomeStatus carry_out(CommandContext &ctx, Session session, const Comparison &c, SessionsLoggingIn *others) {
    const Options &o = ctx.options;
    BatchRun batch(ctx);
    if (others) batch.take_sessions_from(*others);
    if (auto made = make_directories(session, o.sync.upload, c.destination_top, c.destination.exists,
                                     c.plan.directories_to_make);
        !made)
        batch.fail_setup(made.error());
    auto jobs = jobs_of(o, c, c.plan.items);
    if (batch.stopped()) {
        batch.count_unattempted(jobs.size());
        close_session(session);
        return batch.conclude();
    }
    ctx.summary.resume_hint = rerun_command(o);
    batch.run(std::move(jobs), std::move(session), sync_action(o, c.destination_top), sync_ahead(o),
              sync_ahead_window(o));
    // A tree not listed whole fails the run, after what could be copied
    // was, and nothing is deleted.
    for (const auto *tree : {&c.source, &c.destination})
        for (const auto &problem : tree->problems) batch.record_failure(FileJob{}, problem);
    OutcomeStatus status = batch.conclude();
    const auto results = batch.results();
    std::size_t deleted = 0;
    if (status && o.sync.remove_extraneous && c.plan.count(SyncAction::remove).files + c.plan.directories_to_remove.size()) {
        status = check_delete_limit(o, c);
        std::optional<Session> deleting;
        if (status && o.sync.upload) {
            auto opened = open_transfer_session(ctx);
            if (opened) deleting = std::move(*opened);
            else status = std::unexpected(opened.error());
        }
        if (status) status = remove_extraneous(ctx, deleting, c, deleted);
        if (deleting && (status || !session_lost(status.error()))) close_session(*deleting);
    }
    if (!status && !o.sync.unfinished.empty()) {
        auto left = unfinished_paths(o, c, c.plan.items, results);
        if (auto written = write_files_list(o.sync.unfinished, left, o.sync.from0); !written)
            log::error(written.error().message);
        else
            log::notice(std::to_string(left.size()) + " files not finished are listed in " + o.sync.unfinished +
                        "; rerun with --files-from " + o.sync.unfinished + (o.sync.from0 ? " --from0" : ""));
    }
    if (!o.sync.manifest.empty())
        if (auto written = write_manifest(o.sync.manifest, manifest_entries(o, c, c.plan.items, results), o.json); !written && status)
            status = written;
    ctx.summary.files->unchanged = c.plan.count(SyncAction::unchanged).files;
    ctx.summary.files->deleted = deleted;
    if (status) ctx.summary.resume_hint.clear();
    return status;
}

}  // namespace

OutcomeStatus run_sync(CommandContext &ctx) {
    const Options &o = ctx.options;
    if (!o.sync.job_file.empty()) {
        auto jobs = read_job_file(o.sync.job_file);
        if (!jobs) return std::unexpected(jobs.error());
        return run_sync_jobs(ctx, *jobs, o.parallel);
    }
    if (!o.sync.shard.empty()) return run_sync_shard(ctx);
    if (o.sync.finish) return run_sync_finish(ctx);
    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    // The other sessions log in while the trees are compared, but only with
    // a login ticket: an unchanged tree, a scheduled sync's usual case, then
    // costs the server no password checks beyond the first.
    std::optional<SessionsLoggingIn> others;
    if (ctx.login_tickets->ticket() && !o.sync.plan_only && !o.sync.dry_run) others.emplace(ctx, SIZE_MAX);
    auto compared = compare_trees(*session, o, ctx.url.path, o.sync.remove_extraneous);
    if (!compared) {
        others.reset();  // their logins end while the ticket's session is still open
        if (!session_lost(compared.error())) close_session(*session);
        return std::unexpected(compared.error());
    }
    say_tree_warnings(ctx, *compared);
    log::info("sync plan: " + plan_counts(compared->plan));
    if (o.sync.plan_only) {
        close_session(*session);
        return write_sync_plan(ctx, *compared);
    }
    if (o.sync.dry_run) {
        close_session(*session);
        show_plan(ctx, compared->plan);
        if (o.sync.remove_extraneous)
            if (auto limit = check_delete_limit(o, *compared); !limit) return limit;
        for (const auto *tree : {&compared->source, &compared->destination})
            if (!tree->problems.empty()) return std::unexpected(tree->problems.front());
        return {};
    }
    return carry_out(ctx, std::move(*session), *compared, others ? &*others : nullptr);
}

}  // namespace rftp::client
