// Everything the command line says, after parsing and checking.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace rftp::client {

enum class Command { put, get, ls, mkdir, rm, mv, hash, sync, check };

// How file bytes travel: RDMA where both ends can (auto, the default), or
// always TCP, or RDMA or nothing.
enum class Transport { auto_select, rdma, tcp };

// TLS on the control connection (AUTH TLS, or ftps://) and PROT P on data.
// Unset: require for any host that is not loopback, auto for loopback.
enum class TlsMode { auto_select, require, off };

// What makes a file at the destination "changed" for sync and check.
enum class Compare { size, size_and_time, checksum };

struct FilterRule {
    bool include = false;
    std::string pattern;
};

// rftp sync and rftp check (docs/cli.md "Sync").
struct SyncOptions {
    bool upload = false;  // SRC is the local directory, DST the URL; else the other way round
    Compare compare = Compare::size_and_time;
    bool remove_extraneous = false;  // --delete
    // --max-delete N or N%: a run that would delete more deletes nothing.
    std::optional<uint64_t> max_delete;
    bool max_delete_percent = false;
    bool dry_run = false;
    std::vector<FilterRule> filters;  // --include/--exclude in command-line order
    std::string files_from;           // --files-from FILE ("-": stdin)
    std::optional<std::set<std::string>> only;  // the paths a plan's --files-from listed
    bool from0 = false;
    std::string manifest;  // sync: write one; check: compare against one
    std::string unfinished;  // sync: where a failed run lists the files it did not finish
    std::string backup_dir;  // sync: what would be deleted or overwritten goes there (client/sync/backup.h)
    std::vector<std::string> command_line;  // as given, for the command an interrupted run prints
    std::string job_file;  // --job FILE.yaml: the replications it names, -P of them side by side
    // A planned run over many movers (docs/cli.md "Shards"): --plan-only
    // --plan FILE writes the plan; --plan FILE --shard K/N copies a share;
    // --plan FILE --finish deletes and checks once all shares are done.
    std::string plan_file;
    bool plan_only = false;
    std::string shard;
    bool finish = false;
};

struct Options {
    Command command = Command::get;
    std::string url;        // the remote side (get: the first URL)
    std::string local;      // put: the first source; get: destination ("-" = stdout)
    std::vector<std::string> locals;  // put: every LOCAL, in order
    std::vector<std::string> urls;    // get: every URL, in order
    std::string new_path;   // mv: destination path on the server
    bool remove_dir = false;  // rm -d: RMD instead of DELE

    unsigned parallel = 1;           // TCP data connections, or RDMA data queue pairs
    bool parallel_given = false;     // else TCP streams follow the path (tcp_streams_for)
    uint64_t block_size = 8ull << 20;
    bool block_size_given = false;   // else RDMA uses rdma_block_size
    Transport transport = Transport::auto_select;
    uint64_t rdma_block_size = 4ull << 20;
    unsigned iodepth = 8;            // RDMA WRITEs in flight per queue pair
    uint64_t rdma_pool = 64ull << 20;  // registered (pinned) block pool of the client
    std::optional<uint64_t> size;    // put from a device (/dev/zero): how many bytes
    bool sequential_writes = false;  // get over RDMA: write blocks in file order (also allows a pipe)
    bool resume = false;
    std::optional<bool> progress;  // unset: on when stderr is a terminal
    bool json = false;
    bool quiet = false;
    int verbose = 0;
    int timeout_seconds = 60;
    std::optional<TlsMode> tls;
    std::string ca_file;        // --cacert, else $RFTP_CA_BUNDLE; empty: the system's CA store
    std::string pinned_pubkey;  // --pinned-pubkey sha256//<base64>
    bool verify = false;
    // --no-block-checksums: ask the server for OPTS BLOCKSUM NONE (no CRC32C
    // per framed or RDMA block; the links' own checks and --verify remain).
    bool block_checksums = true;

    // Many files per invocation (docs/cli.md "Many files").
    bool recursive = false;
    unsigned concurrency = 4;        // sessions for many files; one file always uses one
    bool continue_on_error = false;
    // Attempts after the first for a file whose connection or transfer broke
    // (exit 3 or 8), continuing its partial file. sync: 3 unless given.
    unsigned retries = 0;

    SyncOptions sync;

    // put with several sources or -r, get with several URLs or -r.
    bool many_files() const {
        if (command == Command::put) return recursive || locals.size() > 1;
        if (command == Command::get) return recursive || urls.size() > 1;
        return false;
    }
};

}  // namespace rftp::client
