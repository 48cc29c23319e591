// A whole-file SHA-256 taken while the file's blocks pass through memory in
// any order, so --verify needs no second pass over the file. A block ahead
// of the digest is kept by its owner (not copied) until every byte before
// it has been hashed; blocks arrive roughly in order (grants go out in file
// order), so few wait.
//
// Not thread-safe by itself: the owner calls add/claim/release under its own
// lock and hashes the claimed blocks outside it. One claim at a time keeps
// the bytes in order.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "middleware/integrity/sha256.h"

namespace rftp::middleware {

class OrderedDigest {
public:
    struct Piece {
        uint32_t block = 0;  // the owner's handle for the memory
        uint64_t offset = 0;
        uint32_t length = 0;
    };

    // Offers a block whose bytes are final. false: those bytes are hashed
    // already (a block sent again), so the owner need not keep it.
    bool add(const Piece &p);
    // The kept blocks that continue the digest, in file order; empty while
    // another claim is being hashed. Hash them with update(), then release().
    std::vector<Piece> claim();
    void update(const uint8_t *data, std::size_t len) { sha_.update(data, len); }
    void release(const std::vector<Piece> &claimed);

    uint64_t hashed() const { return cursor_; }  // bytes [0, hashed()) are in the digest
    // The hex digest once bytes [0, size) are in; nullopt otherwise.
    std::optional<std::string> finish(uint64_t size);

private:
    Sha256 sha_;
    uint64_t cursor_ = 0;
    bool claimed_ = false;
    uint64_t claim_end_ = 0;  // while claimed_: the bytes up to here are being hashed
    std::map<uint64_t, Piece> waiting_;  // by offset
};

}  // namespace rftp::middleware
