// SHA-256 through OpenSSL's EVP interface: the one implementation behind
// the HASH command, `rftp --verify` and the digest taken during transfers.
#pragma once

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace rftp::middleware {

class Sha256 {
public:
    Sha256();
    bool valid() const { return ctx_ != nullptr; }  // false only if OpenSSL could not set up SHA-256
    void update(const uint8_t *data, std::size_t len);
    std::string hex();  // lower-case; ends the digest

private:
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx_{nullptr, EVP_MD_CTX_free};
};

}  // namespace rftp::middleware
