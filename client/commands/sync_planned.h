// The planned forms of rftp sync, for many movers at once (docs/cli.md
// "Shards"). run_sync hands over to these.
#pragma once

#include "client/commands/command_context.h"
#include "client/sync/tree_comparison.h"

namespace rftp::client {

// --plan-only: c as compared, written to --plan FILE; nothing else changes.
OutcomeStatus write_sync_plan(CommandContext &ctx, const Comparison &c);

// --plan FILE --shard K/N: copies that share of the plan.
OutcomeStatus run_sync_shard(CommandContext &ctx);

// --plan FILE --finish: checks every share arrived, then deletes (--delete).
OutcomeStatus run_sync_finish(CommandContext &ctx);

}  // namespace rftp::client
