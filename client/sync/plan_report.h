// How a sync's plan is shown: with --dry-run, one line per change on stdout
// (rsync -i style, unchanged files too at -v) and a JSON "plan" event per
// file with --json; always, the counts and bytes at -v.
#pragma once

#include "client/commands/command_context.h"
#include "client/sync/sync_plan.h"

namespace rftp::client {

// Every item of the plan, as --dry-run shows it.
void show_plan(const CommandContext &ctx, const SyncPlan &plan);

// "12 new (3.0 MB), 2 changed (1.0 kB), 100 unchanged, 1 to delete"
std::string plan_counts(const SyncPlan &plan);

}  // namespace rftp::client
