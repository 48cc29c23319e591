// put/get of many files in one invocation (several sources, or -r): planned
// first, then moved by BatchRun over --concurrency sessions. run_put and
// run_get hand over to these when Options::many_files() says so.
#pragma once

#include "client/commands/command_context.h"
#include "client/exit_codes.h"

namespace rftp::client {

OutcomeStatus run_put_many(CommandContext &ctx);
OutcomeStatus run_get_many(CommandContext &ctx);

}  // namespace rftp::client
