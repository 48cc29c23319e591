// What a sync does, decided before anything moves: each file of the source
// is new, changed (and why) or unchanged at the destination, and with
// --delete each destination file the source lacks is to be removed. Pure:
// the trees (and, for --compare checksum, the digests) go in, the plan
// comes out, so --dry-run shows exactly what a run would do.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/options.h"
#include "client/sync/tree.h"

namespace rftp::client {

enum class SyncAction { copy_new, copy_changed, unchanged, remove };

const char *action_name(SyncAction action);  // "new", "changed", "unchanged", "delete"

struct SyncItem {
    std::string path;  // relative to both tops
    SyncAction action = SyncAction::copy_new;
    std::string reason;  // changed: "size", "mtime" or "checksum"
    uint64_t size = 0;   // the source's (remove: the destination's)
    std::optional<int64_t> source_mtime;  // what the copy's time is set to
    std::optional<std::string> sha256;    // known from --compare checksum
    // changed and unchanged: the destination's file as planned, so a shard
    // run again can tell a copy it finished from the file it was to replace.
    std::optional<TreeFile> destination;
};

struct SyncPlan {
    std::vector<SyncItem> items;  // sorted by path
    std::vector<std::string> directories_to_make;    // at the destination, parents first
    std::vector<std::string> directories_to_remove;  // with --delete, children first

    struct Totals {
        std::size_t files = 0;
        uint64_t bytes = 0;
    };
    Totals count(SyncAction action) const;
};

// Both digests of a file present on both sides with the same size.
struct DigestPair {
    std::string source;
    std::string destination;
};

// The files --compare checksum must hash: on both sides, with the same size.
std::vector<std::string> same_size_files(const Tree &source, const Tree &destination);

// digests: for --compare checksum, every path same_size_files named.
SyncPlan plan_sync(const Tree &source, const Tree &destination, Compare compare, bool remove_extraneous,
                   const std::map<std::string, DigestPair> &digests = {});

}  // namespace rftp::client
