// What a partial file was begun from, kept on the file itself (the extended
// attribute user.rftp.source) so that it survives a crash with the bytes it
// describes. rftp records a download's remote file there, rftpd an upload's
// source (SRCE). Best effort: a file system without user extended
// attributes records nothing, and a resume then trusts sizes alone.
#pragma once

#include <optional>
#include <string>

namespace rftp::middleware {

// What fd's file was recorded as begun from; nullopt when nothing was.
std::optional<std::string> recorded_source(int fd);

void record_source(int fd, const std::string &source);

// Its bytes are vouched for by no source any more (or the file is whole):
// the record goes.
void forget_source(int fd);

}  // namespace rftp::middleware
