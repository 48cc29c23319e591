// Big-endian (network order) integers in wire formats: the parallel-stream
// frame header and the RDMA control messages share these.
#pragma once

#include <cstdint>

namespace rftp::wire {

template <class T>
inline void put_be(uint8_t *p, T v) {
    for (int i = static_cast<int>(sizeof(T)) - 1; i >= 0; --i) {
        p[i] = static_cast<uint8_t>(v & 0xff);
        v = static_cast<T>(static_cast<uint64_t>(v) >> 8);
    }
}

template <class T>
inline T get_be(const uint8_t *p) {
    uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = (v << 8) | p[i];
    return static_cast<T>(v);
}

}  // namespace rftp::wire
