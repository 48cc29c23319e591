// The command that continues an interrupted transfer, printed for the user
// to paste into a POSIX shell (main.cpp, the JSON summary's "resume").
#pragma once

#include <string>
#include <vector>

#include "client/cli/options.h"

namespace rftp::client {

// "rftp VERB -c [-r] [--verify] [the run's other choices] -- ARG..." with
// every argument single-quoted (a quote inside one becomes '\''), so names
// with spaces or quotes survive, and after "--", so a name beginning with
// "-" is not taken for an option. The choices carried over are those that
// change what the run does or how it goes (streams, sessions, transport,
// block size, checksums, the RDMA pool and depth, --continue-on-error, a
// timeout), not its output.
// s in single quotes for a POSIX shell (a quote inside becomes '\'').
std::string shell_quoted(const std::string &s);

std::string resume_command(const char *verb, const Options &o, const std::vector<std::string> &args);

}  // namespace rftp::client
