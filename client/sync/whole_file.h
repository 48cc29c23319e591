// The files sync writes beside the data (a manifest, a plan, a list of
// unfinished files): written whole under "FILE.rftp-part", then renamed
// into place, so a reader never sees half of one, and a failed write
// leaves the old file as it was.
#pragma once

#include <string>

#include "client/exit_codes.h"

namespace rftp::client {

// what names the file in the error ("the manifest"); fails with exit 6.
OutcomeStatus write_whole_file(const std::string &file, const std::string &text, const std::string &what);

}  // namespace rftp::client
