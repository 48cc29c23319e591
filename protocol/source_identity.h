// Which local file an upload's bytes come from. rftp names its source in
// SRCE before an upload; rftpd records the name on the partial upload and
// shows it in MLST as the fact x.rftp-source. A resume (put -c) continues a
// partial upload only when it was begun from the same file: same size, same
// modification time and same inode change time, to the nanosecond
// (docs/protocol.md "Uploads"). The change time is there because the
// modification time is anyone's to set (cp -p, rsync -t, tar): two versions
// of a file with one size and one mtime still differ in it. A false
// "changed" (a chmod meanwhile) costs only an upload of the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>

namespace rftp::ftp {

inline constexpr std::size_t kMaxSourceToken = 96;
// An RFC 3659 local fact ("X." token); fact names compare case-insensitively.
inline constexpr std::string_view kSourceFact = "x.rftp-source";
// The fact's value for a partial upload that records no source: no token
// rftp makes (each has a ':') is this.
inline constexpr std::string_view kNoSource = "none";

// "<size>:<modified>:<changed>", each time as <seconds>.<nanoseconds>, e.g.
// "4294967296:1764118000.123456789:1764118002.000000001".
std::string source_token(uint64_t size, const timespec &modified, const timespec &changed);

// 1..kMaxSourceToken characters from [0-9A-Za-z.:_+-]: what a command's
// argument, an extended attribute and an MLSx fact value all carry as is.
bool valid_source_token(std::string_view token);

}  // namespace rftp::ftp
