// Salted password hashes with scrypt (OpenSSL's EVP_PBE_scrypt), encoded as
//   $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt, base64>$<hash, base64>
// Only such hashes are ever stored; `rftpd --hash-password` makes one.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::daemon {

// Costs used for new hashes: N = 2^15, r = 8, p = 1 (32 MiB, tens of ms).
Result<std::string> hash_password(std::string_view password);

// True when password matches; false when it does not; an error when the
// encoded hash is malformed. Compares in constant time.
Result<bool> verify_password(std::string_view password, std::string_view encoded);

// Checks the shape of an encoded hash without a password (used by the config
// loader so a bad hash is reported at start, not at the first login).
Status check_hash_format(std::string_view encoded);

}  // namespace rftp::daemon
