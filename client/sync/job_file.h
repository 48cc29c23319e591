// rftp sync --job FILE.yaml: one or many replications in one YAML file
// (docs/cli.md "Job files"), each turned into the command line of one
// `rftp sync`. Everything is checked before anything runs: an unknown key
// or a bad value is an error naming file:line:column and the key.
#pragma once

#include <string>
#include <vector>

#include "client/exit_codes.h"

namespace rftp::client {

struct SyncJob {
    std::string name;               // [A-Za-z0-9._-], unique in the file
    std::vector<std::string> args;  // after the program name: "sync", options, "--", SRC, DST
};

Outcome<std::vector<SyncJob>> read_job_file(const std::string &path);

}  // namespace rftp::client
