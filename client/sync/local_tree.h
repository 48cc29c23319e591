// The local side of a sync: a directory walked with openat/fstatat, never
// following a symbolic link, keeping what the filter includes.
#pragma once

#include <string>

#include "client/sync/path_filter.h"
#include "client/sync/tree.h"

namespace rftp::client {

// A top that does not exist is an empty tree with exists = false; a top
// that is not a directory is a usage error. rftp's own partial files
// (".rftp-part", ".rftp-resume") are never part of a tree.
Outcome<Tree> list_local_tree(const std::string &top, const PathFilter &filter);

}  // namespace rftp::client
