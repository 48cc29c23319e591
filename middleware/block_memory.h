// Memory for blocks that the disk reads and writes with O_DIRECT and the NIC
// reaches by DMA (the RDMA block pool, a TCP stream's buffers).
//
// Huge pages where the system has them: explicit ones (hugetlbfs) when some
// are reserved, else transparent ones, asked for with madvise on memory
// aligned to 2 MiB. It matters for the disk: a direct read or write of 4 MiB
// into 4 KiB pages scattered in physical memory is cut into requests of at
// most max_segments pages (254 x 4 KiB, about 1 MiB, on virtio), and a disk
// whose speed depends on the request size then runs at half its rate; in
// 2 MiB pages the block goes to the disk whole (docs/benchmarks.md, "Disk to
// disk"). Unmapped exactly once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace rftp::middleware {

class BlockMemory {
public:
    enum class Pages { small, transparent_huge, huge };

    BlockMemory() = default;
    BlockMemory(BlockMemory &&o) noexcept
        : addr_(std::exchange(o.addr_, nullptr)), size_(std::exchange(o.size_, 0)), pages_(o.pages_) {}
    BlockMemory &operator=(BlockMemory &&o) noexcept {
        if (this != &o) {
            reset();
            addr_ = std::exchange(o.addr_, nullptr);
            size_ = std::exchange(o.size_, 0);
            pages_ = o.pages_;
        }
        return *this;
    }
    BlockMemory(const BlockMemory &) = delete;
    BlockMemory &operator=(const BlockMemory &) = delete;
    ~BlockMemory() { reset(); }

    // At least size bytes, page-aligned (2 MiB-aligned from 2 MiB on); an
    // empty object when even 4 KiB pages cannot be had (errno set).
    static BlockMemory allocate(std::size_t size);
    // What allocate(size) maps, and so what registering it pins: whole
    // pages, whole 2 MiB pages from 2 MiB on.
    static std::size_t mapped_size(std::size_t size);

    uint8_t *data() const { return static_cast<uint8_t *>(addr_); }
    std::size_t size() const { return size_; }
    // What the memory is made of; transparent_huge means asked for (the
    // kernel may still use small pages where it has no 2 MiB free).
    Pages pages() const { return pages_; }
    explicit operator bool() const { return addr_ != nullptr; }
    // Lets go of the memory without unmapping it, for memory the kernel may
    // still write into (a broken io_uring's requests): unmapped, its
    // addresses could be handed to the next mapping and written there.
    // The bytes leak, on purpose.
    void abandon() {
        addr_ = nullptr;
        size_ = 0;
    }

private:
    void reset();
    void *addr_ = nullptr;
    std::size_t size_ = 0;
    Pages pages_ = Pages::small;
};

// "huge", "transparent" or "no": for log lines.
const char *huge_pages_word(BlockMemory::Pages pages);

}  // namespace rftp::middleware
