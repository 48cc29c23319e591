// A sync planned once and carried out by many movers (docs/cli.md
// "Shards"): `rftp sync --plan-only --plan FILE SRC DST` writes it, each
// `--plan FILE --shard K/N` copies its share, `--plan FILE --finish`
// deletes and checks. JSON, so it can be read and diffed; written under a
// partial name and renamed into place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/sync/sync_plan.h"

namespace rftp::client {

struct PlanFile {
    std::string source, destination;  // as given: a local directory and a URL
    bool upload = false;
    Compare compare = Compare::size_and_time;
    bool remove_extraneous = false;
    std::optional<uint64_t> max_delete;
    bool max_delete_percent = false;
    std::vector<FilterRule> filters;
    std::string backup_dir;
    std::optional<std::set<std::string>> only;  // --files-from's paths
    bool destination_exists = false;
    std::vector<std::string> directories_to_make;
    std::vector<SyncItem> copies;  // the new and changed files only
    std::size_t unchanged = 0, to_delete = 0;
};

OutcomeStatus write_plan(const std::string &file, const PlanFile &plan);

// A plan this rftp wrote; anything else, or a damaged one, is a usage error.
Outcome<PlanFile> read_plan(const std::string &file);

}  // namespace rftp::client
