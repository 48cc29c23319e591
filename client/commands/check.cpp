// rftp check SRC DST: lists both trees as sync does and says what differs
// (missing at DST, only at DST, or changed and why); rftp check --manifest
// FILE TREE compares one tree with a manifest sync wrote. Exit 0 only when
// nothing differs, 1 when something does (docs/cli.md "check").
#include <thread>

#include "client/batch/batch_run.h"
#include "client/commands/commands.h"
#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "client/sync/digests.h"
#include "client/sync/files_from.h"
#include "client/sync/local_tree.h"
#include "client/sync/manifest.h"
#include "client/sync/remote_tree_walk.h"
#include "client/sync/tree_comparison.h"
#include "common/log.h"

namespace rftp::client {
namespace {

const char *kind_of(SyncAction action) {
    switch (action) {
        case SyncAction::copy_new: return "missing";   // in SRC (or the manifest), not in DST
        case SyncAction::remove: return "extra";       // in DST only
        default: return "differs";
    }
}

// Says every difference; returns how many there were.
std::size_t report_differences(const CommandContext &ctx, const SyncPlan &plan) {
    std::size_t differences = 0;
    for (const auto &item : plan.items) {
        if (item.action == SyncAction::unchanged) continue;
        ++differences;
        if (ctx.options.json) {
            nlohmann::json ev{{"event", "difference"}, {"path", item.path}, {"kind", kind_of(item.action)}};
            if (!item.reason.empty()) ev["reason"] = item.reason;
            emit_json_event(ev);
            continue;
        }
        std::string kind = kind_of(item.action);
        if (!item.reason.empty()) kind += " (" + item.reason + ")";
        print_to_stdout(kind + "\t" + log::printable(item.path) + "\n");
    }
    return differences;
}

OutcomeStatus conclude_check(CommandContext &ctx, const Comparison &c) {
    for (const auto *tree : {&c.source, &c.destination})
        for (const auto &text : tree->skipped) log::warning(text);
    for (const auto &note : c.notes) ctx.note(note);
    const std::size_t differences = report_differences(ctx, c.plan);
    FileCounts counts;
    counts.total = c.plan.items.size();
    counts.unchanged = c.plan.count(SyncAction::unchanged).files;
    ctx.summary.files = counts;
    for (const auto *tree : {&c.source, &c.destination})
        if (!tree->problems.empty()) {
            for (const auto &p : tree->problems) log::error(p.message);
            return fail_as(tree->problems.front().exit, "a tree could not be listed whole, so the check is incomplete: " +
                                                            tree->problems.front().message);
        }
    if (differences == 0) return {};
    return fail_as(ExitCode::differs, std::to_string(differences) + " of " + std::to_string(counts.total) +
                                          " files differ");
}

Tree tree_of(const std::vector<ManifestEntry> &entries, const PathFilter &filter) {
    Tree tree;
    for (const auto &e : entries)
        if (filter.includes(e.path, false)) tree.files[e.path] = TreeFile{e.size, e.mtime};
    return tree;
}

// The tree the manifest describes, listed; its digests with --checksum.
OutcomeStatus check_against_manifest(CommandContext &ctx) {
    const Options &o = ctx.options;
    auto entries = read_manifest(o.sync.manifest);
    if (!entries) return std::unexpected(entries.error());
    const PathFilter filter(o.sync.filters);
    Comparison c;
    c.source = tree_of(*entries, filter);
    std::optional<Session> session;
    const bool remote = !o.url.empty();
    c.destination_top = remote ? remote_top(ctx.url.path) : o.local;
    if (remote) {
        auto opened = open_transfer_session(ctx);
        if (!opened) return std::unexpected(opened.error());
        session = std::move(*opened);
    }
    auto listed = remote ? list_remote_tree(*session, c.destination_top, filter) : list_local_tree(o.local, filter);
    if (!listed) return std::unexpected(listed.error());
    c.destination = std::move(*listed);
    if (!c.destination.exists) return fail_as(ExitCode::usage, c.destination_top + " is not a directory");
    if (!o.sync.files_from.empty()) {
        auto only = read_files_from(o.sync.files_from, o.sync.from0);
        if (!only) return std::unexpected(only.error());
        keep_only(c.source, *only);
        keep_only(c.destination, *only);
    }
    std::map<std::string, DigestPair> digests;
    if (o.sync.compare == Compare::checksum) {
        const auto paths = same_size_files(c.source, c.destination);
        auto actual = remote ? remote_digests(*session, c.destination_top, paths)
                             : local_digests(c.destination_top, paths, std::max(2u, std::thread::hardware_concurrency()));
        if (!actual) return std::unexpected(actual.error());
        std::map<std::string, std::string> recorded;
        for (const auto &e : *entries)
            if (e.sha256) recorded[e.path] = *e.sha256;
        for (const auto &path : paths) digests[path] = DigestPair{recorded[path], (*actual)[path]};
    }
    if (session) close_session(*session);
    c.plan = plan_sync(c.source, c.destination, o.sync.compare, true, digests);
    return conclude_check(ctx, c);
}

}  // namespace

OutcomeStatus run_check(CommandContext &ctx) {
    const Options &o = ctx.options;
    if (!o.sync.manifest.empty()) {
        if (!o.url.empty() && !o.local.empty())
            return fail_as(ExitCode::usage, "check --manifest FILE compares one tree with it; give one TREE");
        return check_against_manifest(ctx);
    }
    auto session = open_transfer_session(ctx);
    if (!session) return std::unexpected(session.error());
    auto compared = compare_trees(*session, o, ctx.url.path, true);
    if (!compared) {
        if (!session_lost(compared.error())) close_session(*session);
        return std::unexpected(compared.error());
    }
    close_session(*session);
    return conclude_check(ctx, *compared);
}

}  // namespace rftp::client
