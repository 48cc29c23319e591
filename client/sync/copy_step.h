// The steps of a sync that change the destination, shared by a whole run
// and by one shard of a planned run: make directories, turn plan items into
// file jobs, move one file and give it its source's time, and say what
// arrived (--manifest) or did not (--unfinished).
#pragma once

#include <string>
#include <vector>

#include "client/batch/batch_run.h"
#include "client/sync/manifest.h"
#include "client/sync/tree_comparison.h"

namespace rftp::client {

// The destination's top (with its missing parents, unless top_exists), then
// directories beneath it, parents first. A refused one fails the run before
// any file moves: a dataset copied without one of its directories is no copy.
OutcomeStatus make_directories(Session &session, bool upload, const std::string &top, bool top_exists,
                               const std::vector<std::string> &directories);

// The new and changed items as jobs between c's tops.
std::vector<FileJob> jobs_of(const Options &o, const Comparison &c, const std::vector<SyncItem> &items);

// One file: put or get as the single-file commands do (a new file continues
// its partial, a changed one starts over), then the source's time as it was
// when sent (MFMT, MDTM, utimensat).
// With --backup-dir, the file a changed one replaces is moved there first.
FileAction sync_action(const Options &o, const std::string &destination_top);
// A download's next copy, begun while the one before it ends (files_ahead.h);
// nothing for an upload.
AheadAction sync_ahead(const Options &o);
// How many downloads may be begun ahead at once, as get -r has them
// (files_ahead.h); one for an upload.
AheadWindow sync_ahead_window(const Options &o);

// What the destination holds of items after the run: the unchanged files
// and the copies that succeeded, with the digests taken on the way.
std::vector<ManifestEntry> manifest_entries(const Options &o, const Comparison &c, const std::vector<SyncItem> &items,
                                            const std::vector<FileResult> &results);

// The source-relative paths of the items to copy that did not arrive.
std::vector<std::string> unfinished_paths(const Options &o, const Comparison &c, const std::vector<SyncItem> &items,
                                          const std::vector<FileResult> &results);

}  // namespace rftp::client
