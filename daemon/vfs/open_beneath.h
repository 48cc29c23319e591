// openat2(2) confined to a directory: the one primitive through which the
// daemon reaches user files. RESOLVE_BENEATH makes the kernel refuse (EXDEV)
// any resolution that would leave dirfd, whether by "..", an absolute path or
// a symlink, checked atomically during the lookup, so a client racing renames
// or symlinks against us cannot escape. RESOLVE_NO_MAGICLINKS refuses
// /proc/self/fd-style links, which would otherwise jump anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/unique_fd.h"

namespace rftp::daemon {

// Opens vpath ("/" or "/a/b": the leading '/' means dirfd itself) beneath
// dirfd. flags and mode as for open(2); O_CLOEXEC is always added. Errors
// carry the negative errno and name vpath (never the host path).
Result<UniqueFd> open_beneath(int dirfd, std::string_view vpath, uint64_t flags, uint64_t mode = 0);

}  // namespace rftp::daemon
