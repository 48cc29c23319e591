#include "middleware/block_memory.h"

#include <sys/mman.h>

namespace rftp::middleware {
namespace {

constexpr std::size_t kHugePage = 2u << 20;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

void *map_anonymous(std::size_t size, int extra_flags) {
    void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra_flags, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

// mmap aligns to 4 KiB only: map 2 MiB more and give back the ends.
void *map_huge_aligned(std::size_t size) {
    auto *raw = static_cast<uint8_t *>(map_anonymous(size + kHugePage, 0));
    if (!raw) return nullptr;
    auto *start = reinterpret_cast<uint8_t *>(round_up(reinterpret_cast<uintptr_t>(raw), kHugePage));
    if (start > raw) ::munmap(raw, static_cast<std::size_t>(start - raw));
    uint8_t *end = raw + size + kHugePage;
    if (end > start + size) ::munmap(start + size, static_cast<std::size_t>(end - (start + size)));
    return start;
}

}  // namespace

std::size_t BlockMemory::mapped_size(std::size_t size) {
    return size < kHugePage ? round_up(size, 4096) : round_up(size, kHugePage);
}

BlockMemory BlockMemory::allocate(std::size_t size) {
    BlockMemory m;
    if (size < kHugePage) {
        m.addr_ = map_anonymous(size, 0);
        if (m.addr_) m.size_ = size;
        return m;
    }
    const std::size_t rounded = round_up(size, kHugePage);
    if ((m.addr_ = map_anonymous(rounded, MAP_HUGETLB))) {
        m.size_ = rounded;
        m.pages_ = Pages::huge;
        return m;
    }
    if (!(m.addr_ = map_huge_aligned(rounded))) return m;
    m.size_ = rounded;
    // Refused where transparent huge pages are off ("never") or not built in:
    // the memory then stays in 4 KiB pages, which works, only slower.
    if (::madvise(m.addr_, rounded, MADV_HUGEPAGE) == 0) m.pages_ = Pages::transparent_huge;
    return m;
}

void BlockMemory::reset() {
    if (addr_) ::munmap(addr_, size_);
    addr_ = nullptr;
    size_ = 0;
}

const char *huge_pages_word(BlockMemory::Pages pages) {
    switch (pages) {
        case BlockMemory::Pages::huge: return "huge";
        case BlockMemory::Pages::transparent_huge: return "transparent";
        case BlockMemory::Pages::small: return "no";
    }
    return "no";
}

}  // namespace rftp::middleware
