// One function per subcommand; each opens its own session and returns how it
// ended. Declared together so main can dispatch on Options::command.
#pragma once

#include "client/commands/command_context.h"
#include "client/exit_codes.h"

namespace rftp::client {

OutcomeStatus run_put(CommandContext &ctx);
OutcomeStatus run_get(CommandContext &ctx);
OutcomeStatus run_ls(CommandContext &ctx);
OutcomeStatus run_mkdir(CommandContext &ctx);
OutcomeStatus run_rm(CommandContext &ctx);
OutcomeStatus run_mv(CommandContext &ctx);
OutcomeStatus run_hash(CommandContext &ctx);
OutcomeStatus run_sync(CommandContext &ctx);
OutcomeStatus run_check(CommandContext &ctx);

}  // namespace rftp::client
