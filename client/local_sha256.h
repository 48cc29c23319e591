// SHA-256 of a local file with OpenSSL's EVP interface, for --verify.
#pragma once

#include <string>

#include "common/result.h"

namespace rftp::client {

// Lower-case hex digest of the whole file at path.
Result<std::string> sha256_of_file(const std::string &path);

}  // namespace rftp::client
