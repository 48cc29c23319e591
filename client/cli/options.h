// Everything the command line says, after parsing and checking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rftp::client {

enum class Command { put, get, ls, mkdir, rm, mv, hash };

struct Options {
    Command command = Command::get;
    std::string url;        // the remote side
    std::string local;      // put: source; get: destination ("-" = stdout)
    std::string new_path;   // mv: destination path on the server
    bool remove_dir = false;  // rm -d: RMD instead of DELE

    unsigned parallel = 1;
    uint64_t block_size = 8ull << 20;
    bool resume = false;
    std::optional<bool> progress;  // unset: on when stderr is a terminal
    bool json = false;
    bool quiet = false;
    int verbose = 0;
    int timeout_seconds = 60;
    bool verify = false;
};

}  // namespace rftp::client
