// io_uring instances a session keeps between its TCP transfers. Setting a
// ring up and tearing it down (io_uring_setup, its mmaps and munmaps, the
// exit's cancel work) cost about 6 % of rftpd's CPU on uploads of 256 KiB,
// where every file's every stream made its own. A ring with plain buffers
// holds nothing of the file or the user, so the next transfer may take it
// as it is.
//
// A ring is kept with the eventfd that ends its waits early
// (BlockIo::wake), which saves setting that up again too.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "common/unique_fd.h"
#include "middleware/disk/io_ring.h"

namespace rftp::middleware::disk {

struct KeptRing {
    IoRing ring;
    UniqueFd wake_fd;
};

class RingCache {
public:
    // Keeps at most max_rings (each costs two descriptors while kept).
    explicit RingCache(std::size_t max_rings) : max_rings_(max_rings) {}
    RingCache(const RingCache &) = delete;
    RingCache &operator=(const RingCache &) = delete;

    // The smallest kept ring with room for entries submissions, if any.
    // Safe from any thread.
    std::optional<KeptRing> take(unsigned entries);
    // Back for the next transfer: it must hold no operation in flight. One
    // with registered buffers, or beyond max_rings, is closed.
    void give(KeptRing ring);
    std::size_t kept() const;

private:
    mutable std::mutex mutex_;
    std::vector<KeptRing> kept_;
    const std::size_t max_rings_;
};

}  // namespace rftp::middleware::disk
