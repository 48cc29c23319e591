// TYPE A transfers (RFC 959 §3.1.1.1): lines end in CRLF on the wire and in
// LF on disk. Rare in bulk transfer, so plain read/write with conversion.
#pragma once

#include <cstdint>

#include "common/result.h"
#include "middleware/transfer_progress.h"

namespace rftp::daemon {

// Sends the file from offset, LF -> CRLF. Returns bytes read from the file.
Result<uint64_t> send_ascii(int sock, int file_fd, uint64_t offset, middleware::TransferProgress &progress);

// Receives until the peer closes, CRLF -> LF, writing from offset. Returns the end offset.
Result<uint64_t> receive_ascii(int sock, int file_fd, uint64_t offset, middleware::TransferProgress &progress);

}  // namespace rftp::daemon
