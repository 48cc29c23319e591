#include "middleware/integrity/sha256.h"

#include "common/hex.h"

namespace rftp::middleware {

Sha256::Sha256() {
    ctx_.reset(EVP_MD_CTX_new());
    if (ctx_ && EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) ctx_.reset();
}

void Sha256::update(const uint8_t *data, std::size_t len) {
    if (ctx_) EVP_DigestUpdate(ctx_.get(), data, len);
}

std::string Sha256::hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!ctx_ || EVP_DigestFinal_ex(ctx_.get(), md, &len) != 1) return {};
    return hex_lower(std::span<const uint8_t>(md, len));
}

}  // namespace rftp::middleware
