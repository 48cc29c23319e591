// --files-from FILE: the paths, relative to the source's top, that a sync or
// check is limited to (as rsync and globus-url-copy -f take them back). A
// listed directory stands for everything beneath it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "client/sync/tree.h"

namespace rftp::client {

// One path per line (a trailing CR dropped), or NUL-separated with from0;
// "-" reads stdin. Empty lines and lines starting with '#' are skipped
// (not with from0, where every name is taken as it is). A leading "./" or
// "/" is dropped; a path with a ".." component is refused with its line.
Outcome<std::set<std::string>> read_files_from(const std::string &file, bool from0);

// Writes paths as read_files_from reads them back (NUL-separated with
// from0), under a partial name renamed into place.
OutcomeStatus write_files_list(const std::string &file, const std::vector<std::string> &paths, bool from0);

// Keeps in tree only the files and directories listed, or beneath one listed.
void keep_only(Tree &tree, const std::set<std::string> &listed);

}  // namespace rftp::client
