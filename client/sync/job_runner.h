// Runs the replications of a job file, each as its own `rftp sync` process
// (this program again), one after another or up to side_by_side at once.
// Each child's output comes back through pipes: with --json, every event it
// prints gains "job": its name (its summary becomes a "job" event), so the
// run is one stream; without, each line it prints is prefixed "[name] ".
// The run ends with the most severe exit status of its replications.
#pragma once

#include <vector>

#include "client/commands/command_context.h"
#include "client/sync/job_file.h"

namespace rftp::client {

OutcomeStatus run_sync_jobs(CommandContext &ctx, const std::vector<SyncJob> &jobs, unsigned side_by_side);

}  // namespace rftp::client
