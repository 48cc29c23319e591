// Whole-file SHA-256 (OpenSSL EVP), the digest the HASH command answers with
// and `rftp --verify` compares against.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware {

// Lower-case hex SHA-256 of bytes [0, size) of fd, read with pread (the shared
// file position is never used). Stops early when progress.abort is set.
Result<std::string> sha256_of_file(int fd, uint64_t size, TransferProgress *progress = nullptr);

}  // namespace rftp::middleware
