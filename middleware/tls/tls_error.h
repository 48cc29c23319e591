// OpenSSL reports failures on a per-thread error queue; these turn it into
// one line for a log or a message, and empty it so the next call starts clean.
#pragma once

#include <string>

#include "common/result.h"

namespace rftp::middleware::tls {

// "what: the queue's reasons" (or "what" alone when the queue is empty).
std::string openssl_failure(const std::string &what);

// The same as an Error.
inline Error tls_error(const std::string &what) { return Error{-EPROTO, openssl_failure(what)}; }

// Empties the queue (before a call whose failure is read from it).
void clear_openssl_errors();

}  // namespace rftp::middleware::tls
