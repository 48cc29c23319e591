// The users' password hashes. Two families are read:
//   $scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt, base64>$<hash, base64>
// rftpd's own (scrypt through OpenSSL's EVP_PBE_scrypt), and crypt(3)'s
// (crypt_hash.h: yescrypt, sha512crypt, ... as /etc/shadow and mkpasswd
// have them). `rftpd --hash-password` makes yescrypt.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::daemon {

enum class HashFormat { yescrypt, scrypt };

// A new hash with a fresh salt: yescrypt at libxcrypt's default cost, or
// rftpd's scrypt format at N = 2^15, r = 8, p = 1 (32 MiB, tens of ms).
Result<std::string> hash_password(std::string_view password, HashFormat format = HashFormat::yescrypt);

// True when password matches; false when it does not; an error when the
// encoded hash is malformed. Compares in constant time.
Result<bool> verify_password(std::string_view password, std::string_view encoded);

// Checks the shape of an encoded hash without a password (used by the config
// loader so a bad hash is reported at start, not at the first login).
Status check_hash_format(std::string_view encoded);

}  // namespace rftp::daemon
