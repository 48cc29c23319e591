// One plain data connection (FTP MODE S, TYPE I): the file's bytes, start to
// end, then close. Sending uses sendfile(2) with TCP_CORK. Receiving into a
// regular file goes through the disk engine (blocks written at their
// offsets, O_DIRECT where the file system takes it); into anything else it
// uses splice(2) from the socket through a pipe.
// Both fall back to read/write where the kernel refuses the zero-copy call
// (e.g. a source that is not a regular file). Neither touches the file's
// shared position. Blocking calls; the caller sets socket timeouts and, to
// abort, sets progress.abort and shuts the socket down.
#pragma once

#include <cstdint>
#include <functional>

#include "common/result.h"
#include "middleware/disk/disk_file.h"
#include "middleware/tcp/stream_cache.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware {

// Sends [offset, end) of file_fd to sock. Does not close sock.
Status send_stream(int sock, int file_fd, uint64_t offset, uint64_t end, TransferProgress &progress);

// Receives until the peer closes, writing at offset onwards. Returns the end
// offset. file_fd may also be a non-seekable sink (pipe, /dev/null, stdout).
// On failure a regular file holds exactly what arrived whole, from offset on.
// kept: the session's kept buffers and rings (stream_cache.h), or null.
// placement: at_own_position writes in order through file_fd's own offset
// (stdout; disk_file.h), offset then only counts.
// on_prefix_grown: into a regular file the disk engine keeps several writes
// in flight, and they finish in any order; this is told the end of the
// prefix known to be written as it grows, for a resume journal, so that a
// process killed mid-stream leaves a true resume point (its file's size may
// run past a block that was never written).
Result<uint64_t> receive_stream(int sock, int file_fd, uint64_t offset, TransferProgress &progress,
                                bool direct_io = true, StreamCache *kept = nullptr,
                                disk::Placement placement = disk::Placement::at_offsets,
                                const std::function<void(uint64_t)> &on_prefix_grown = {});

}  // namespace rftp::middleware
