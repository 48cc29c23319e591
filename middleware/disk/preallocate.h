// Reserving a destination's blocks before its bytes arrive.
#pragma once

#include <cstdint>

#include "common/result.h"

namespace rftp::middleware {

// fallocate(KEEP_SIZE) of [offset, offset + length): the file's visible size
// still grows only as bytes are written, so a partial file never looks
// complete. A file system that cannot preallocate is not an error; a full
// disk (ENOSPC) or a quota (EDQUOT) is, with a message that says so, and
// whatever the attempt reserved is given back.
Status preallocate(int fd, uint64_t offset, uint64_t length);

}  // namespace rftp::middleware
