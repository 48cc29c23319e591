#include "middleware/integrity/file_digest.h"

#include <unistd.h>

#include <vector>

#include "middleware/integrity/sha256.h"

namespace rftp::middleware {

Result<std::string> sha256_of_file(int fd, uint64_t size, TransferProgress *progress) {
    Sha256 digest;
    if (!digest.valid()) return fail_msg("SHA-256 unavailable");
    std::vector<unsigned char> buf(1u << 20);
    uint64_t offset = 0;
    while (offset < size) {
        if (progress && progress->abort.load()) return fail(Error{-ECANCELED, "digest aborted"});
        ssize_t n = ::pread(fd, buf.data(), std::min<uint64_t>(buf.size(), size - offset), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("read for digest");
        }
        if (n == 0) return fail(file_ended_early(offset));
        digest.update(buf.data(), static_cast<std::size_t>(n));
        offset += static_cast<uint64_t>(n);
        if (progress) progress->bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
    return digest.hex();
}

}  // namespace rftp::middleware
