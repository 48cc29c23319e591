// A file's SHA-256 taken while it moved over RDMA, with what identified the
// file's content at that moment: HASH answers from it, with no read of the
// file, for as long as the file is unchanged.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

namespace rftp::daemon {

struct TransferDigest {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = 0;
    timespec modified{};  // not the change time: the rename into place changes that
    std::string sha256;

    // The file behind fd as it is now, with sha256 (empty: identity only).
    static std::optional<TransferDigest> of(int fd, std::string sha256);
    // The digest taken while fd was sent (RETR, RRTR), kept only for the
    // file as it was before (same identity and modification time) and of
    // the size sent: one rewritten meanwhile went as a mix, and one that
    // grew after its size was taken was sent only in part.
    static std::optional<TransferDigest> of_unchanged(int fd, const std::optional<TransferDigest> &before,
                                                      std::string sha256, off_t sent);
    bool same_file_as(const TransferDigest &o) const {
        return device == o.device && inode == o.inode && size == o.size && modified.tv_sec == o.modified.tv_sec &&
               modified.tv_nsec == o.modified.tv_nsec;
    }
    bool matches(const struct stat &st) const {
        return st.st_dev == device && st.st_ino == inode && st.st_size == size &&
               st.st_mtim.tv_sec == modified.tv_sec && st.st_mtim.tv_nsec == modified.tv_nsec;
    }
};

}  // namespace rftp::daemon
