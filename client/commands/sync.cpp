// rftp sync SRC DST: makes DST a copy of SRC, one a local directory and the
// other a URL. Lists both trees, plans (client/sync/sync_plan.h), makes the
// missing directories, copies what is new or changed over --concurrency
// sessions as put -r/get -r do, gives each copy its source's time, then
// with --delete removes what the source lacks, and writes --manifest.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "client/batch/batch_run.h"
#include "client/batch/remote_tree.h"
#include "client/commands/commands.h"
#include "client/commands/get_one_file.h"
#include "client/commands/put_one_file.h"
#include "client/commands/resume_command.h"
#include "client/sync/deletion.h"
#include "client/sync/file_times.h"
#include "client/sync/files_from.h"
#include "client/sync/job_file.h"
#include "client/sync/job_runner.h"
#include "client/sync/manifest.h"
#include "client/sync/plan_report.h"
#include "client/sync/tree_comparison.h"
#include "common/log.h"

namespace rftp::client {
namespace {

// The destination's top and every directory the plan lacks, parents first.
// A refused one fails the run before any file moves: a dataset copied
// without one of its directories is no copy.
OutcomeStatus make_directories(Session &session, const Options &o, const Comparison &c) {
    std::vector<std::string> wanted;
    if (!c.destination.exists) {
        // The top and any missing parents of it, outermost first.
        std::filesystem::path top(c.destination_top), so_far;
        for (const auto &part : top) {
            so_far /= part;
            if (part != "/" && !part.empty()) wanted.push_back(so_far.generic_string());
        }
    }
    for (const auto &dir : c.plan.directories_to_make) wanted.push_back(path_under(c.destination_top, dir));
    for (const auto &dir : wanted) {
        if (o.sync.upload) {
            if (auto made = ensure_remote_directory(session, dir); !made) return made;
        } else if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
            return fail_as(ExitCode::local_file, "cannot make directory " + dir + ": " + std::strerror(errno));
        }
    }
    return {};
}

std::vector<FileJob> jobs_of(const Options &o, const Comparison &c) {
    std::vector<FileJob> jobs;
    const std::string &local_top = o.sync.upload ? c.source_top : c.destination_top;
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    for (const auto &item : c.plan.items) {
        if (item.action != SyncAction::copy_new && item.action != SyncAction::copy_changed) continue;
        FileJob job{path_under(local_top, item.path), path_under(remote_top, item.path), item.size, std::nullopt};
        job.replaces = item.action == SyncAction::copy_changed;
        job.source_mtime = item.source_mtime;
        jobs.push_back(std::move(job));
    }
    return jobs;
}

// Said once per run whatever the number of files, so the same words for all.
constexpr const char *kTimesRefused =
    "the server would not set modification times (MFMT or MDTM); the next sync copies these files again "
    "unless it compares with --compare size or --compare checksum";

// One file of the sync: put or get as the single-file commands do (a new
// file continues its partial, a changed one starts over), then the time.
FileAction sync_action(const Options &o) {
    auto fresh = std::make_shared<Options>(o), continuing = std::make_shared<Options>(o);
    fresh->resume = false;
    continuing->resume = true;
    return [fresh, continuing, upload = o.sync.upload](Session &s, const FileJob &job, const FileProgressHooks &hooks,
                                                       FileReport &report) -> OutcomeStatus {
        const Options &fo = job.replaces ? *fresh : *continuing;
        if (upload) {
            auto source = open_upload_source(job.local);
            if (!source) return std::unexpected(source.error());
            if (auto moved = put_one_file(s, fo, *source, job.remote, hooks, report); !moved) return moved;
            if (!job.source_mtime) return {};
            auto set = set_remote_mtime(s, job.remote, *job.source_mtime);
            if (!set && session_lost(set.error())) return set;
            if (!set) report.note(kTimesRefused);
            return {};
        }
        auto dest = destination_at(job.local);
        if (!dest) return std::unexpected(dest.error());
        if (dest->direct) return fail_as(ExitCode::local_file, job.local + " exists and is not a regular file");
        if (auto moved = get_one_file(s, fo, job.remote, *dest, hooks, report, ListedFacts{job.size, job.modify}); !moved)
            return moved;
        auto when = job.source_mtime;
        if (!when) {  // the listing gave none (LIST): MDTM, one round trip
            auto asked = remote_mtime(s, job.remote);
            if (!asked) return std::unexpected(asked.error());
            when = *asked;
        }
        return when ? set_local_mtime(job.local, *when) : OutcomeStatus{};
    };
}

// What the destination holds after the run: the unchanged files and the
// copies that succeeded, with the digests taken on the way (--verify).
std::vector<ManifestEntry> manifest_entries(const Options &o, const Comparison &c, const std::vector<FileResult> &results) {
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    std::map<std::string, const FileResult *> by_remote;
    for (const auto &r : results) by_remote[r.job.remote] = &r;
    std::vector<ManifestEntry> entries;
    for (const auto &item : c.plan.items) {
        if (item.action == SyncAction::remove) continue;
        ManifestEntry e{item.path, item.size, item.source_mtime, item.sha256};
        if (item.action == SyncAction::unchanged) {
            e.mtime = c.destination.files.at(item.path).mtime;
        } else {
            auto r = by_remote.find(path_under(remote_top, item.path));
            if (r == by_remote.end() || r->second->failure) continue;  // not there, or not this version
            e.sha256 = r->second->report.sha256;
        }
        entries.push_back(std::move(e));
    }
    return entries;
}

// The source-relative paths of the files to copy that did not arrive.
std::vector<std::string> unfinished_paths(const Options &o, const Comparison &c, const std::vector<FileResult> &results) {
    const std::string &remote_top = o.sync.upload ? c.destination_top : c.source_top;
    std::set<std::string> arrived;
    for (const auto &r : results)
        if (!r.failure) arrived.insert(r.job.remote);
    std::vector<std::string> paths;
    for (const auto &item : c.plan.items)
        if ((item.action == SyncAction::copy_new || item.action == SyncAction::copy_changed) &&
            !arrived.contains(path_under(remote_top, item.path)))
            paths.push_back(item.path);
    return paths;
}

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

// Copies, then deletes, then the manifest; session is the one planning used.
OutcomeStatus carry_out(CommandContext &ctx, Session session, const Comparison &c) {
    const Options &o = ctx.options;
    BatchRun batch(ctx);
    // A tree not listed whole: its files are failures, and nothing is deleted.
    for (const auto *tree : {&c.source, &c.destination})
        for (const auto &problem : tree->problems) batch.record_failure(FileJob{}, problem);
    if (auto made = make_directories(session, o, c); !made) batch.fail_setup(made.error());
    auto jobs = jobs_of(o, c);
    if (batch.stopped()) {
        batch.count_unattempted(jobs.size());
        close_session(session);
        return batch.conclude();
    }
    ctx.summary.resume_hint = rerun_command(o);
    batch.run(std::move(jobs), std::move(session), sync_action(o));
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
        auto left = unfinished_paths(o, c, results);
        if (auto written = write_files_list(o.sync.unfinished, left, o.sync.from0); !written)
            log::error(written.error().message);
        else
            log::notice(std::to_string(left.size()) + " files not finished are listed in " + o.sync.unfinished +
                        "; rerun with --files-from " + o.sync.unfinished + (o.sync.from0 ? " --from0" : ""));
    }
    if (!o.sync.manifest.empty())
        if (auto written = write_manifest(o.sync.manifest, manifest_entries(o, c, results), o.json); !written && status)
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
    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    auto compared = compare_trees(*session, o, ctx.url.path, o.sync.remove_extraneous);
    if (!compared) {
        if (!session_lost(compared.error())) close_session(*session);
        return std::unexpected(compared.error());
    }
    say_tree_warnings(ctx, *compared);
    log::info("sync plan: " + plan_counts(compared->plan));
    if (o.sync.dry_run) {
        close_session(*session);
        show_plan(ctx, compared->plan);
        if (o.sync.remove_extraneous)
            if (auto limit = check_delete_limit(o, *compared); !limit) return limit;
        for (const auto *tree : {&compared->source, &compared->destination})
            if (!tree->problems.empty()) return std::unexpected(tree->problems.front());
        return {};
    }
    return carry_out(ctx, std::move(*session), *compared);
}

}  // namespace rftp::client
