// The last step of sync --delete: destination files the source lacks are
// removed, then the directories they leave empty. It runs only after every
// copy of the run succeeded and both trees were listed whole, and never
// beyond --max-delete: over the limit, nothing at all is removed (exit 9).
#pragma once

#include "client/commands/command_context.h"
#include "client/session.h"
#include "client/sync/tree_comparison.h"

namespace rftp::client {

// Whether the plan's deletions fit --max-delete (counted against the
// destination's files as listed); else why not, as a failure with exit 9.
OutcomeStatus check_delete_limit(const Options &o, const Comparison &c);

// Removes what the plan says; session is needed when the destination is the
// server (else unused and may be empty). Counts into deleted; each removal
// is a JSON "delete" event. A refused file is a failure (the rest are still
// tried); a directory that does not go (it holds excluded files) is a warning.
OutcomeStatus remove_extraneous(const CommandContext &ctx, std::optional<Session> &session, const Comparison &c,
                                std::size_t &deleted);

}  // namespace rftp::client
