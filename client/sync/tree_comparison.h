// The first half of sync and check: both trees listed (one listing per
// directory on each side), narrowed by the filters and --files-from, with
// what --compare needs filled in (times a LIST cannot give, digests), and
// the plan that follows from them.
#pragma once

#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/session.h"
#include "client/sync/path_filter.h"
#include "client/sync/sync_plan.h"
#include "client/sync/tree.h"

namespace rftp::client {

struct Comparison {
    std::string source_top, destination_top;  // a local path, or a server's absolute path
    Tree source, destination;
    SyncPlan plan;
    std::vector<std::string> notes;  // said once: what this server could not offer
    std::optional<std::set<std::string>> only;  // --files-from's paths, as read
};

// The run's filters, with --backup-dir kept out of the tree when it lies beneath destination_top.
PathFilter sync_filter(const Options &o, const std::string &destination_top);

// The URL's path as a tree's top: "/data/" -> "/data", "" -> "/".
std::string remote_top(const std::string &url_path);

// Lists both sides over session and plans. remove_extraneous: also list
// what the destination has beyond the source (sync --delete, check).
Outcome<Comparison> compare_trees(Session &session, const Options &o, const std::string &remote_path,
                                  bool remove_extraneous);

}  // namespace rftp::client
