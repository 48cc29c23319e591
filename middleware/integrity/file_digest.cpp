#include "middleware/integrity/file_digest.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <memory>
#include <vector>

namespace rftp::middleware {

Result<std::string> sha256_of_file(int fd, uint64_t size, TransferProgress *progress) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return fail_msg("SHA-256 unavailable");
    std::vector<unsigned char> buf(1u << 20);
    uint64_t offset = 0;
    while (offset < size) {
        if (progress && progress->abort.load()) return fail(Error{-ECANCELED, "digest aborted"});
        ssize_t n = ::pread(fd, buf.data(), std::min<uint64_t>(buf.size(), size - offset), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("read for digest");
        }
        if (n == 0) return fail_msg("file shrank while computing its digest");
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
        offset += static_cast<uint64_t>(n);
        if (progress) progress->bytes.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md, &len);
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
        out += hex[md[i] >> 4];
        out += hex[md[i] & 15];
    }
    return out;
}

}  // namespace rftp::middleware
