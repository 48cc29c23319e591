// A directory tree as rftp sync and check see it, on either side: every
// plain file under the top (relative path, size, modification time) and
// every directory. Both sides are listed the same way, so the plan compares
// like with like.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/exit_codes.h"

namespace rftp::client {

struct TreeFile {
    uint64_t size = 0;
    std::optional<int64_t> mtime;  // whole seconds, UTC; absent when the side did not say
};

struct Tree {
    bool exists = true;  // false: the top is not there yet (a first sync)
    std::map<std::string, TreeFile> files;  // relative path ("a/b.dat") -> facts, sorted
    std::set<std::string> directories;      // relative paths, the top not included
    // What could not be listed or read (a refused directory, an unreadable
    // listing line): the tree is incomplete, so nothing is deleted after it.
    std::vector<Failure> problems;
    // Entries left out by design (symbolic links, devices): said as warnings.
    std::vector<std::string> skipped;
};

// "a/b" joined under a top ("/data" -> "/data/a/b"; "/" -> "/a/b").
std::string path_under(const std::string &top, const std::string &relative);

}  // namespace rftp::client
