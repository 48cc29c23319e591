#include "daemon/data/transfer_digest.h"

namespace rftp::daemon {

std::optional<TransferDigest> TransferDigest::of(int fd, std::string sha256) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    return TransferDigest{st.st_dev, st.st_ino, st.st_size, st.st_mtim, std::move(sha256)};
}

std::optional<TransferDigest> TransferDigest::of_unchanged(int fd, const std::optional<TransferDigest> &before,
                                                           std::string sha256, off_t sent) {
    auto after = of(fd, std::move(sha256));
    if (!before || !after || !before->same_file_as(*after) || after->size != sent) return std::nullopt;
    return after;
}

}  // namespace rftp::daemon
