// A file of rftp's own at a name others can write to (a shared directory):
// opened only if what is there, or what gets created, is a plain file. A
// symlink is not followed, and a FIFO cannot hang the open waiting for its
// other end.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/unique_fd.h"

namespace rftp::middleware {

// open(2) of path with flags (O_NOFOLLOW and, for the open itself only,
// O_NONBLOCK added). On failure an invalid fd, with errno as open(2) sets it
// (ELOOP: a symlink; EISDIR: a directory; ENXIO: a FIFO nobody reads), or
// EINVAL when it opened something other than a plain file.
UniqueFd open_plain_file(const std::string &path, int flags, mode_t mode = 0644);

}  // namespace rftp::middleware
