// Shares of a planned sync for N movers (docs/cli.md "Shards"):
// - Stable: the same plan gives the same shares, so a task run again
//   redoes only its own files.
// - Balanced by bytes: the largest file first, each to the share with the
//   fewest bytes so far (ties: the lowest share; equal sizes in path order),
//   each file counting 256 KiB more than its size for what it costs beyond
//   its bytes. One huge file and many small ones do not land on one task.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "client/sync/sync_plan.h"

namespace rftp::client {

struct ShardId {
    std::size_t index = 0;  // 0-based
    std::size_t count = 1;
};

// "K/N" (1-based K, as Slurm's and humans' counting), "auto" (Slurm array:
// SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT), or
// "auto/N" (K from Slurm or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX).
Outcome<ShardId> parse_shard(const std::string &spec);

// The items of shard id among items (kept in their plan order).
std::vector<SyncItem> share_of(const std::vector<SyncItem> &items, ShardId id);

}  // namespace rftp::client
