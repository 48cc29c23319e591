// The remote side of a sync: one listing per directory (MLSD where the
// server offers MLST, else LIST), walked breadth-first, keeping what the
// filter includes. No per-file command: sizes and times come from the
// listings (a LIST gives no usable time; sync then asks MDTM, see
// client/sync/file_times.h).
#pragma once

#include <string>

#include "client/session.h"
#include "client/sync/path_filter.h"
#include "client/sync/tree.h"

namespace rftp::client {

// top is absolute. A top that is not a directory on the server (CWD
// refused) is an empty tree with exists = false. Only a lost session is an
// error; a directory the server refuses to list is one of the tree's problems.
Outcome<Tree> list_remote_tree(Session &session, const std::string &top, const PathFilter &filter);

}  // namespace rftp::client
