// Everything the command line says, after parsing and checking.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rftp::client {

enum class Command { put, get, ls, mkdir, rm, mv, hash };

struct Options {
    Command command = Command::get;
    std::string url;        // the remote side (get: the first URL)
    std::string local;      // put: the first source; get: destination ("-" = stdout)
    std::vector<std::string> locals;  // put: every LOCAL, in order
    std::vector<std::string> urls;    // get: every URL, in order
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

    // Many files per invocation (docs/cli.md "Many files").
    bool recursive = false;
    unsigned concurrency = 4;        // sessions for many files; one file always uses one
    bool continue_on_error = false;

    // put with several sources or -r, get with several URLs or -r.
    bool many_files() const {
        if (command == Command::put) return recursive || locals.size() > 1;
        if (command == Command::get) return recursive || urls.size() > 1;
        return false;
    }
};

}  // namespace rftp::client
