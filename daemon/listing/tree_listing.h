// MLSR: a whole tree as MLSD lines (docs/protocol.md, "Tree listings"),
// written one directory at a time, so no tree is held whole in memory.
// Every directory is opened through the user's root, as MLSD's is.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "daemon/vfs/user_root.h"

namespace rftp::daemon {

// What one listing may cost the daemon. Past max_entries or max_bytes the
// listing ends with a failure: a client then lists the tree directory by
// directory, with a bound of its own (rftp reads at most 256 MiB of a
// listing too).
struct TreeListingBounds {
    std::size_t max_entries = 1'000'000;
    std::size_t max_bytes = std::size_t{256} << 20;
    // The directories still to list are held as paths: bounded apart from
    // the entries, since each costs its path twice.
    std::size_t max_pending_path_bytes = std::size_t{64} << 20;
    // Lines go to the sink in pieces of about this size: a directory of a
    // million entries under a long path is never one string.
    std::size_t piece_bytes = std::size_t{256} << 10;
};

// An entry of the directory dir as listings show it: a symlink that stays
// beneath the root as what it points to, so mirroring clients follow it;
// one that leaves the root or dangles as the link it is.
struct stat listed_stat(const UserRoot &root, const std::string &dir, const DirEntry &entry);

// One entry of the directory dir as MLSD lists it (listed_stat), named
// shown_name.
std::string mlsd_entry_line(const UserRoot &root, const std::string &dir, const DirEntry &entry,
                            std::string_view shown_name);

// Takes the next lines, whole lines at a time.
using TreeListingSink = std::function<Status(std::string_view lines)>;

// Lists the tree below vpath (a directory, from resolve_virtual_path),
// depth first, into sink. Goes down into real directories only; a symbolic
// link is listed as MLSD lists it and not entered. Fails on the first
// directory that cannot be listed, a name with a line break in it, past
// either bound, when stopped() says so between directories, or when sink
// fails.
Status list_tree(const UserRoot &root, const std::string &vpath, const TreeListingSink &sink,
                 const std::function<bool()> &stopped, const TreeListingBounds &bounds = {});

}  // namespace rftp::daemon
