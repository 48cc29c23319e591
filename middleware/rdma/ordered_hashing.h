// The whole-file digest on the way: blocks are hashed in file order as they
// come, by whichever pipeline thread finds the next one ready, outside the
// pipeline's lock.
#pragma once

#include <functional>
#include <mutex>
#include <vector>

#include "middleware/integrity/ordered_digest.h"
#include "middleware/rdma/block_pool.h"

namespace rftp::middleware::rdma {

using PieceStep = std::function<void(const OrderedDigest::Piece &)>;

// Hashes whatever now continues the digest and runs after_hash on each such
// block, with lock dropped; then, under it again and while still_current(),
// hands each to done. Returns with lock held.
inline void hash_in_order(std::unique_lock<std::mutex> &lock, OrderedDigest &digest, const BlockPool &pool,
                          const std::function<bool()> &still_current, const PieceStep &after_hash,
                          const PieceStep &done) {
    for (;;) {
        std::vector<OrderedDigest::Piece> claimed = digest.claim();
        if (claimed.empty()) return;
        lock.unlock();
        for (const auto &p : claimed) {
            digest.update(pool.block(p.block), p.length);
            if (after_hash) after_hash(p);
        }
        lock.lock();
        digest.release(claimed);
        if (!still_current()) return;
        for (const auto &p : claimed) done(p);
    }
}

}  // namespace rftp::middleware::rdma
