#include "middleware/integrity/ordered_digest.h"

namespace rftp::middleware {

bool OrderedDigest::add(const Piece &p) {
    // A block sent again while its first copy is being hashed is in already.
    if (p.offset < (claimed_ ? claim_end_ : cursor_) || waiting_.count(p.offset)) return false;
    waiting_.emplace(p.offset, p);
    return true;
}

std::vector<OrderedDigest::Piece> OrderedDigest::claim() {
    std::vector<Piece> out;
    if (claimed_) return out;
    uint64_t next = cursor_;
    for (auto it = waiting_.find(next); it != waiting_.end() && it->first == next; it = waiting_.find(next)) {
        out.push_back(it->second);
        next += it->second.length;
        waiting_.erase(it);
    }
    claimed_ = !out.empty();
    claim_end_ = next;
    return out;
}

void OrderedDigest::release(const std::vector<Piece> &claimed) {
    for (const Piece &p : claimed) cursor_ += p.length;
    claimed_ = false;
}

std::optional<std::string> OrderedDigest::finish(uint64_t size) {
    if (cursor_ != size || claimed_ || !sha_.valid()) return std::nullopt;
    return sha_.hex();
}

}  // namespace rftp::middleware
