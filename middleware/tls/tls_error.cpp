#include "middleware/tls/tls_error.h"

#include <openssl/err.h>

namespace rftp::middleware::tls {

std::string openssl_failure(const std::string &what) {
    std::string reasons;
    while (unsigned long e = ERR_get_error()) {
        const char *reason = ERR_reason_error_string(e);
        std::string text = reason ? reason : "error " + std::to_string(e);
        if (reasons.find(text) == std::string::npos) reasons += (reasons.empty() ? "" : "; ") + text;
    }
    return reasons.empty() ? what : what + ": " + reasons;
}

void clear_openssl_errors() { ERR_clear_error(); }

}  // namespace rftp::middleware::tls
