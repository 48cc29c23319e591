// Password hashes in crypt(3)'s formats, through libxcrypt's crypt_rn:
// yescrypt ($y$: Debian's default for /etc/shadow and mkpasswd), scrypt
// ($7$), sha512crypt ($6$) and bcrypt ($2b$, $2y$). An admin can copy a
// hash from /etc/shadow or make one with mkpasswd. What libxcrypt counts as
// legacy (DES, md5crypt, sha256crypt) is refused: a GPU gets through the
// first two in hours. A work
// cost above what a login may take (sha*crypt rounds over 10 million,
// bcrypt over 2^16) is refused at start, as a mistyped one would stall
// every login.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::daemon {

// Whether encoded names one of the crypt(3) methods above.
bool is_crypt_hash(std::string_view encoded);

// A new yescrypt hash at libxcrypt's default cost, with a fresh salt.
Result<std::string> crypt_hash_password(std::string_view password);

// True when password matches, false when it does not; an error when the
// hash is malformed. Compares in constant time.
Result<bool> crypt_verify_password(std::string_view password, std::string_view encoded);

// The shape and cost of an encoded hash, without a password.
Status crypt_check_hash_format(std::string_view encoded);

}  // namespace rftp::daemon
