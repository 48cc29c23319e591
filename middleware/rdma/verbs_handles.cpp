#include "middleware/rdma/verbs_handles.h"

namespace rftp::middleware::rdma {

MappedMemory MappedMemory::allocate(std::size_t size) {
    MappedMemory m;
    constexpr std::size_t kHugePage = 2u << 20;
    if (size >= kHugePage && size % kHugePage == 0) {
        void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
        if (p != MAP_FAILED) {
            m.addr_ = p;
            m.size_ = size;
            m.huge_ = true;
            return m;
        }
    }
    void *p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return m;
    m.addr_ = p;
    m.size_ = size;
    return m;
}

}  // namespace rftp::middleware::rdma
