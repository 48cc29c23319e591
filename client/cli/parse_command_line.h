// The command line, read with CLI11 subcommands. Invoked as "rput" or "rget"
// (argv[0]'s basename) the subcommand is implied.
#pragma once

#include <optional>
#include <string>

#include "client/cli/options.h"

namespace rftp::client {

struct ParsedCommandLine {
    std::optional<Options> options;  // absent: exit now with exit_status
    int exit_status = 0;             // 0 after --help/--version, 2 on a usage error
    std::string error;               // a usage error's message (already on stderr)
    std::string command;             // the subcommand named, where one was
    bool json = false;               // --json was asked for
};

ParsedCommandLine parse_command_line(int argc, char **argv);

}  // namespace rftp::client
