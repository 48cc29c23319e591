// The command that continues an interrupted transfer, printed for the user
// to paste into a POSIX shell (main.cpp, the JSON summary's "resume").
#pragma once

#include <string>
#include <vector>

#include "client/cli/options.h"

namespace rftp::client {

// "rftp VERB -c [-r] [--verify] ARG..." with every argument single-quoted (a quote
// inside one becomes '\''), so names with spaces or quotes survive.
std::string resume_command(const char *verb, const Options &o, const std::vector<std::string> &args);

}  // namespace rftp::client
