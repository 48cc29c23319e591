#include "middleware/random_token.h"

#include <openssl/rand.h>

namespace rftp::middleware {

Result<wire::Token> new_random_token() {
    wire::Token t{};
    if (RAND_bytes(t.data(), static_cast<int>(t.size())) != 1) return fail_msg("no random bytes for a token");
    return t;
}

}  // namespace rftp::middleware
