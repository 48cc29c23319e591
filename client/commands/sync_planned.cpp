// rftp sync over many movers (docs/cli.md "Shards"):
//   --plan-only --plan FILE SRC DST   lists and plans once, writes FILE
//   --plan FILE --shard K/N|auto      copies share K of N of the plan
//   --plan FILE --finish              once every share is done: checks that
//                                     nothing is left to copy, then deletes
// A share run again sends none of the files an earlier attempt finished.
#include <filesystem>
#include <set>

#include "client/batch/batch_run.h"
#include "client/commands/sync_planned.h"
#include "client/sync/copy_step.h"
#include "client/sync/deletion.h"
#include "client/sync/files_from.h"
#include "client/sync/local_tree.h"
#include "client/sync/plan_file.h"
#include "client/sync/plan_report.h"
#include "client/sync/remote_tree_walk.h"
#include "client/sync/shards.h"
#include "common/log.h"

namespace rftp::client {
namespace {

// The run a plan describes: its tops, direction and choices, with this
// command line's own options (sessions, transport, retries, output).
struct PlannedRun {
    Options options;
    Url url;
};

Outcome<PlannedRun> planned_run(const Options &given, const PlanFile &plan) {
    PlannedRun run{given, {}};
    Options &o = run.options;
    o.local = plan.upload ? plan.source : plan.destination;
    o.url = plan.upload ? plan.destination : plan.source;
    o.sync.upload = plan.upload;
    o.sync.compare = plan.compare;
    o.sync.remove_extraneous = plan.remove_extraneous;
    o.sync.max_delete = plan.max_delete;
    o.sync.max_delete_percent = plan.max_delete_percent;
    o.sync.filters = plan.filters;
    o.sync.backup_dir = plan.backup_dir;
    o.sync.only = plan.only;
    o.sync.files_from.clear();
    auto url = parse_url(o.url);
    if (!url) return fail_as(ExitCode::usage, "the plan's URL: " + url.error().message);
    run.url = *url;
    return run;
}

Comparison tops_of(const PlannedRun &run) {
    Comparison c;
    const std::string remote = remote_top(run.url.path);
    c.source_top = run.options.sync.upload ? run.options.local : remote;
    c.destination_top = run.options.sync.upload ? remote : run.options.local;
    return c;
}

// Whether the destination already holds this item as a copy would leave it:
// its size, and the source's time, which only a finished copy sets (and
// not the file it was to replace, as planned).
bool already_copied(const SyncItem &item, const Tree &destination) {
    auto now = destination.files.find(item.path);
    if (now == destination.files.end() || !item.source_mtime) return false;
    const TreeFile &f = now->second;
    if (f.size != item.size || f.mtime != item.source_mtime) return false;
    return !item.destination || item.destination->size != f.size || item.destination->mtime != f.mtime;
}

// The directories the items need, parents first.
std::vector<std::string> parents_of(const std::vector<SyncItem> &items) {
    std::set<std::string> dirs;
    for (const auto &item : items)
        for (auto slash = item.path.find('/'); slash != std::string::npos; slash = item.path.find('/', slash + 1))
            dirs.insert(item.path.substr(0, slash));
    return {dirs.begin(), dirs.end()};
}

Outcome<Tree> list_destination(Session &session, const PlannedRun &run, const Comparison &c) {
    const PathFilter filter = sync_filter(run.options, c.destination_top);
    return run.options.sync.upload ? list_remote_tree(session, c.destination_top, filter)
                                   : list_local_tree(c.destination_top, filter);
}

OutcomeStatus copy_share(CommandContext &ctx, const PlannedRun &run, const std::vector<SyncItem> &share) {
    const Options &o = run.options;
    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    Comparison c = tops_of(run);
    auto listed = list_destination(*session, run, c);
    if (!listed) {
        if (!session_lost(listed.error())) close_session(*session);
        return std::unexpected(listed.error());
    }
    c.destination = std::move(*listed);
    std::vector<SyncItem> remaining;
    for (const auto &item : share) {
        if (already_copied(item, c.destination)) continue;
        remaining.push_back(item);
        // There, but not as a finished copy leaves it: an attempt cut between
        // the rename into place and the time, or another writer. Sent again
        // whole, as a changed file is: -c would take it as complete.
        if (c.destination.files.contains(item.path)) remaining.back().action = SyncAction::copy_changed;
    }
    log::info("shard: " + std::to_string(share.size()) + " files, " + std::to_string(share.size() - remaining.size()) +
              " of them copied by an earlier attempt");
    BatchRun batch(ctx);
    if (auto made = make_directories(*session, o.sync.upload, c.destination_top, c.destination.exists, parents_of(remaining));
        !made)
        batch.fail_setup(made.error());
    auto jobs = jobs_of(o, c, remaining);
    if (batch.stopped()) {
        batch.count_unattempted(jobs.size());
        close_session(*session);
        return batch.conclude();
    }
    batch.run(std::move(jobs), std::move(*session), sync_action(o, c.destination_top), sync_ahead(o),
              sync_ahead_window(o));
    OutcomeStatus status = batch.conclude();
    const auto results = batch.results();
    if (!status && !o.sync.unfinished.empty())
        if (auto w = write_files_list(o.sync.unfinished, unfinished_paths(o, c, remaining, results), o.sync.from0); !w)
            log::error(w.error().message);
    if (!o.sync.manifest.empty())
        if (auto w = write_manifest(o.sync.manifest, manifest_entries(o, c, remaining, results), o.json); !w && status)
            status = w;
    ctx.summary.files->unchanged = share.size() - remaining.size();  // copied by an earlier attempt
    return status;
}

// After every share: nothing may be left to copy; then --delete, once.
OutcomeStatus finish_planned_sync(CommandContext &ctx, Session session, const Comparison &c) {
    const Options &o = ctx.options;
    FileCounts counts;  // total: files this run was to copy, none
    counts.unchanged = c.plan.count(SyncAction::unchanged).files;
    ctx.summary.files = counts;
    for (const auto *tree : {&c.source, &c.destination})
        if (!tree->problems.empty()) {
            close_session(session);
            return std::unexpected(tree->problems.front());
        }
    const std::size_t left = c.plan.count(SyncAction::copy_new).files + c.plan.count(SyncAction::copy_changed).files;
    if (left) {
        close_session(session);
        SyncPlan copies;
        for (const auto &item : c.plan.items)
            if (item.action == SyncAction::copy_new || item.action == SyncAction::copy_changed) copies.items.push_back(item);
        show_plan(ctx, copies);
        return fail_as(ExitCode::differs, std::to_string(left) + " files are not at the destination yet: rerun the "
                                                                  "shards that failed, then --finish again; nothing "
                                                                  "was deleted");
    }
    // Shares make only the directories their files need: empty ones come now.
    if (auto made = make_directories(session, o.sync.upload, c.destination_top, c.destination.exists,
                                     c.plan.directories_to_make);
        !made) {
        if (!session_lost(made.error())) close_session(session);
        return made;
    }
    OutcomeStatus status;
    std::optional<Session> deleting(std::move(session));
    if (o.sync.remove_extraneous) {
        status = check_delete_limit(o, c);
        if (status) status = remove_extraneous(ctx, deleting, c, ctx.summary.files->deleted);
    }
    if (deleting && (status || !session_lost(status.error()))) close_session(*deleting);
    if (!o.sync.manifest.empty())
        if (auto w = write_manifest(o.sync.manifest, manifest_entries(o, c, c.plan.items, {}), o.json); !w && status)
            status = w;
    return status;
}

// Runs fn in a context for the planned run, and hands its summary back.
template <class Fn>
OutcomeStatus in_planned_context(CommandContext &ctx, const PlanFile &plan, Fn fn) {
    auto run = planned_run(ctx.options, plan);
    if (!run) return std::unexpected(run.error());
    CommandContext inner{run->options, run->url, ctx.progress_view, {}};
    OutcomeStatus status = fn(inner, *run);
    ctx.summary = std::move(inner.summary);
    return status;
}

}  // namespace

OutcomeStatus write_sync_plan(CommandContext &ctx, const Comparison &c) {
    const Options &o = ctx.options;
    // Movers start elsewhere (another node, a pod, sbatch --chdir): a
    // relative directory would name another tree there.
    const std::string local = std::filesystem::absolute(o.local).lexically_normal().generic_string();
    PlanFile plan{o.sync.upload ? local : o.url, o.sync.upload ? o.url : local, o.sync.upload, o.sync.compare,
                  o.sync.remove_extraneous, o.sync.max_delete, o.sync.max_delete_percent, o.sync.filters,
                  o.sync.backup_dir, c.only, c.destination.exists, c.plan.directories_to_make, {}, 0, 0};
    for (const auto &item : c.plan.items) {
        if (item.action == SyncAction::copy_new || item.action == SyncAction::copy_changed) plan.copies.push_back(item);
        if (item.action == SyncAction::unchanged) ++plan.unchanged;
        if (item.action == SyncAction::remove) ++plan.to_delete;
    }
    for (const auto *tree : {&c.source, &c.destination})
        if (!tree->problems.empty()) return std::unexpected(tree->problems.front());
    if (auto written = write_plan(o.sync.plan_file, plan); !written) return written;
    FileCounts counts;  // total: files this run was to copy, none
    counts.unchanged = plan.unchanged;
    ctx.summary.files = counts;
    if (!o.quiet && !o.json)
        std::fprintf(stderr, "rftp: sync plan in %s: %s\n", o.sync.plan_file.c_str(), plan_counts(c.plan).c_str());
    return {};
}

OutcomeStatus run_sync_shard(CommandContext &ctx) {
    auto plan = read_plan(ctx.options.sync.plan_file);
    if (!plan) return std::unexpected(plan.error());
    auto id = parse_shard(ctx.options.sync.shard);
    if (!id) return std::unexpected(id.error());
    const auto share = share_of(plan->copies, *id);
    log::info("shard " + std::to_string(id->index + 1) + " of " + std::to_string(id->count) + ": " +
              std::to_string(share.size()) + " of the plan's " + std::to_string(plan->copies.size()) + " files");
    return in_planned_context(ctx, *plan, [&](CommandContext &inner, const PlannedRun &run) {
        return copy_share(inner, run, share);
    });
}

OutcomeStatus run_sync_finish(CommandContext &ctx) {
    auto plan = read_plan(ctx.options.sync.plan_file);
    if (!plan) return std::unexpected(plan.error());
    return in_planned_context(ctx, *plan, [&](CommandContext &inner, const PlannedRun &run) -> OutcomeStatus {
        auto session = open_transfer_session(inner);
        if (!session) return std::unexpected(session.error());
        auto c = compare_trees(*session, run.options, run.url.path, run.options.sync.remove_extraneous);
        if (!c) return std::unexpected(c.error());
        return finish_planned_sync(inner, std::move(*session), *c);
    });
}

}  // namespace rftp::client
