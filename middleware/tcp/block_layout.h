// How a framed transfer cuts the bytes [start, size) into blocks: block k
// starts at start + k × block_size and is block_size long, the last one
// shorter. Sender and receiver both know it, so a block is named by its
// offset and length alone.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace rftp::middleware {

struct BlockRange {
    uint64_t offset;
    uint32_t length;
};

class BlockLayout {
public:
    BlockLayout(uint64_t start, uint64_t size, uint32_t block_size)
        : start_(start), size_(std::max(size, start)), block_size_(std::max<uint32_t>(block_size, 1)) {}

    uint32_t block_size() const { return block_size_; }
    uint64_t end() const { return size_; }
    uint64_t count() const { return (size_ - start_ + block_size_ - 1) / block_size_; }

    // index < count()
    BlockRange at(uint64_t index) const {
        const uint64_t offset = start_ + index * block_size_;
        return {offset, static_cast<uint32_t>(std::min<uint64_t>(block_size_, size_ - offset))};
    }

    // The block that begins at offset, when length is its length: whether a
    // receiver's request names a block of this transfer at all.
    std::optional<BlockRange> block_at(uint64_t offset, uint64_t length) const {
        if (offset < start_ || offset >= size_ || (offset - start_) % block_size_ != 0) return std::nullopt;
        const BlockRange block = at((offset - start_) / block_size_);
        if (block.length != length) return std::nullopt;
        return block;
    }

private:
    uint64_t start_, size_;
    uint32_t block_size_;
};

}  // namespace rftp::middleware
