// What rftp prints on stdout (listings, digests, JSON events) goes through
// here, so that the first write that failed is remembered with its reason:
// main reports it once the command is done (`rftp ls URL > listing.txt` on a
// full disk is exit 6, not a cut listing and exit 0).
#pragma once

#include <string_view>

namespace rftp::client {

// Writes text to stdout (stdio's buffer; flushed by flush_stdout or at exit).
void print_to_stdout(std::string_view text);
// Flushes stdout, remembering a failure.
void flush_stdout();
// Remembers err as the reason stdout failed, unless one is known already.
void remember_stdout_error(int err);
// The errno of the first failed write to stdout (0: none).
int stdout_error();

}  // namespace rftp::client
