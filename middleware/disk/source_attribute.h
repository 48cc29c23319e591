// What a partial file was begun from, kept on the file itself (the extended
// attribute user.rftp.source) so that it survives a crash with the bytes it
// describes. rftp records a download's remote file there, rftpd an upload's
// source (SRCE). A file system without user extended attributes records
// nothing, and a resume there can only trust sizes.
#pragma once

#include <optional>
#include <string>

#include "common/result.h"

namespace rftp::middleware {

// What fd's file was recorded as begun from: the record; nullopt when it
// has none; an error when that cannot be told (a file system without user
// extended attributes, say).
Result<std::optional<std::string>> recorded_source(int fd);

// Records source on fd's file. When that fails, an earlier record is removed
// as well as it can be: it would vouch for bytes it did not see.
Status record_source(int fd, const std::string &source);

// Its bytes are vouched for by no source any more (or the file is whole):
// the record goes.
void forget_source(int fd);

}  // namespace rftp::middleware
