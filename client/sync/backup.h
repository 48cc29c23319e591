// --backup-dir DIR: what a sync would delete or overwrite at the
// destination is moved there instead, under its path relative to the top
// (as rsync --backup-dir). DIR is on the destination's side: a server path
// for an upload, a local one for a download; a relative DIR is beneath the
// destination's top, and is then never part of the synced tree.
#pragma once

#include <optional>
#include <string>

#include "client/session.h"

namespace rftp::client {

// DIR as an absolute path on the destination's side.
std::string backup_top(const std::string &backup_dir, const std::string &destination_top);

// DIR's path relative to the destination's top when it lies beneath it
// ("old" for "old" or "/data/old" under "/data"), for the filter that keeps
// it out of the tree; nullopt otherwise.
std::optional<std::string> backup_inside_tree(const std::string &backup_dir, const std::string &destination_top);

// Moves the destination file at relative path into the backup directory,
// making the directories it needs. session: the server's, for an upload.
OutcomeStatus back_up(Session *session, const std::string &destination_top, const std::string &backup_dir,
                      const std::string &relative);

}  // namespace rftp::client
