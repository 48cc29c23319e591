#include "client/cli/parse_command_line.h"

#include <cstdlib>
#include <CLI/CLI.hpp>

#include <cstdio>

#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "common/byte_size.h"
#include "common/path_text.h"

#ifndef RFTP_VERSION
#define RFTP_VERSION "0.1.0"
#endif

namespace rftp::client {
namespace {

// A size option's value ("8M"), or why it is not one.
Result<uint64_t> byte_size_option(const std::string &text) {
    if (auto bytes = parse_byte_size(text)) return *bytes;
    return fail_msg("bad size '" + text + "' (expected e.g. 65536, 512K, 8M, 1G)");
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, char **argv) {
    // rput/rget are rftp with the subcommand filled in.
    std::vector<std::string> args;
    std::string invoked = basename_of(argc > 0 && argv[0] ? argv[0] : "rftp");
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
    if (invoked == "rput") args.insert(args.begin(), "put");
    else if (invoked == "rget") args.insert(args.begin(), "get");

    Options o;
    std::string block_size = "8M";
    CLI::App app{"rftp: fast, safe file transfer over FTP (rftpd or any FTP server)", "rftp"};
    app.set_version_flag("--version", std::string("rftp ") + RFTP_VERSION);
    app.require_subcommand(1);
    app.fallthrough();  // shared options may come before or after the subcommand

    app.add_option("-P,--parallel", o.parallel, "data connections (TCP) or queue pairs (RDMA) for one file (rftpd only)")
        ->check(CLI::Range(1, 256));
    auto *block_opt = app.add_option("--block-size", block_size,
                                     "largest block per frame with -P, or per RDMA WRITE (K/M/G suffixes; "
                                     "default 8M over TCP, 4M over RDMA)");
    app.add_option("--iodepth", o.iodepth, "RDMA WRITEs in flight per queue pair (default 8)")->check(CLI::Range(1, 256));
    std::string rdma_pool = "64M", device_size;
    app.add_option("--rdma-pool", rdma_pool, "pinned block pool for RDMA (default 64M)");
    app.add_flag("--sequential-writes", o.sequential_writes,
                 "get over RDMA: write blocks in file order (for media that need it; allows stdout or a pipe)");
    app.add_option("--size", device_size, "put from a device such as /dev/zero: send this many bytes (K/M/G suffixes)");
    app.add_flag("-c,--continue", o.resume, "resume from a partial transfer");
    bool want_progress = false, no_progress = false;
    auto *progress_on = app.add_flag("--progress", want_progress, "show progress on stderr");
    auto *progress_off = app.add_flag("--no-progress", no_progress, "never show progress");
    progress_on->excludes(progress_off);
    app.add_flag("--json", o.json, "newline-delimited JSON events on stdout");
    app.add_flag("-q,--quiet", o.quiet, "only errors on stderr");
    app.add_flag("-v,--verbose", o.verbose, "more detail on stderr (repeat for protocol traces)");
    app.add_option("--timeout", o.timeout_seconds, "control/data inactivity timeout in seconds")
        ->check(CLI::Range(1, 86400));
    std::string tls;
    app.add_option("--tls", tls,
                   "auto (TLS when the server offers it), require, off (passwords in clear); default: $RFTP_TLS, "
                   "else require, or auto for a loopback host")
        ->check(CLI::IsMember({"auto", "require", "off"}));
    app.add_option("--cacert", o.ca_file, "CA bundle (PEM) to check the server's certificate with, instead of the "
                                          "system's (also $RFTP_CA_BUNDLE)");
    app.add_option("--pinned-pubkey", o.pinned_pubkey,
                   "the server's public key must be this one: sha256//<base64>[;sha256//...] (as curl)");
    std::string transport = "auto";
    app.add_option("--transport", transport,
                   "auto (RDMA where both ends can, else TCP), rdma (RDMA or fail), tcp")
        ->check(CLI::IsMember({"auto", "rdma", "tcp"}));
    app.add_flag("--verify", o.verify, "compare the server's SHA-256 (HASH) with the local file");
    bool no_block_checksums = false;
    app.add_flag("--no-block-checksums", no_block_checksums,
                 "skip the CRC32C on every block (framed and RDMA transfers); the network's own checks and --verify remain");
    app.add_flag("-r,--recursive", o.recursive, "put/get whole directory trees");
    app.add_option("-j,--concurrency", o.concurrency, "sessions moving files at once, for many files (default 4)")
        ->check(CLI::Range(1, 64));
    app.add_flag("--continue-on-error", o.continue_on_error,
                 "with many files, go on after a failed file (exit with the most severe code)");

    // "LOCAL... URL" and "URL... LOCAL": CLI11 cannot put a single positional
    // after a list, so both are read as one list and split below.
    std::vector<std::string> put_args, get_args;
    auto *put = app.add_subcommand("put", "upload LOCAL... to URL (a directory when there are several)");
    put->add_option("LOCAL...URL", put_args,
                    "local files (directories with -r), then the destination; a URL path ending in / "
                    "gets each LOCAL's basename")
        ->required();
    auto *get = app.add_subcommand("get", "download URL... to LOCAL (a directory when there are several)");
    get->add_option("URL...LOCAL", get_args,
                    "remote files (directories with -r), then a file, directory, device, or - for stdout")
        ->required();
    auto *ls = app.add_subcommand("ls", "list a remote directory");
    ls->add_option("URL", o.url)->required();
    auto *mkdir = app.add_subcommand("mkdir", "create a remote directory");
    mkdir->add_option("URL", o.url)->required();
    auto *rm = app.add_subcommand("rm", "remove a remote file");
    rm->add_option("URL", o.url)->required();
    rm->add_flag("-d,--dir", o.remove_dir, "remove an empty directory instead (RMD)");
    auto *mv = app.add_subcommand("mv", "rename a remote file or directory");
    mv->add_option("URL", o.url)->required();
    mv->add_option("NEWPATH", o.new_path, "new path; relative paths are relative to URL's directory")->required();
    auto *hash = app.add_subcommand("hash", "print the server's SHA-256 of a remote file");
    hash->add_option("URL", o.url)->required();

    // A usage error keeps what --json needs for its summary (main.cpp).
    ParsedCommandLine refused{std::nullopt, to_int(ExitCode::usage)};
    for (const auto &a : args) {
        if (a == "--json") refused.json = true;
        if (refused.command.empty())
            for (const char *name : {"put", "get", "ls", "mkdir", "rm", "mv", "hash"})
                if (a == name) refused.command = a;
    }
    auto usage_error = [&refused](std::string message) {
        std::fprintf(stderr, "rftp: %s\n", message.c_str());
        refused.error = std::move(message);
        return refused;
    };
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());
        app.parse(reversed);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        if (rc == 0) return ParsedCommandLine{std::nullopt, 0};
        refused.error = e.what();
        return refused;
    }
    auto size = byte_size_option(block_size);
    if (!size || *size < (64u << 10) || *size > (1ull << 30))
        return usage_error(std::string("--block-size: ") + (size ? "must be between 64K and 1G" : size.error().message));
    o.block_size = *size;
    o.block_size_given = block_opt->count() > 0;
    if (o.block_size_given) o.rdma_block_size = *size;
    if (tls.empty())
        if (const char *mode = std::getenv("RFTP_TLS")) {
            tls = mode;
            if (tls != "auto" && tls != "require" && tls != "off")
                return usage_error("$RFTP_TLS: expected auto, require or off, got '" + tls + "'");
        }
    if (!tls.empty()) o.tls = tls == "off" ? TlsMode::off : tls == "require" ? TlsMode::require : TlsMode::auto_select;
    if (o.ca_file.empty())
        if (const char *bundle = std::getenv("RFTP_CA_BUNDLE")) o.ca_file = bundle;
    if (!o.pinned_pubkey.empty() && !o.pinned_pubkey.starts_with("sha256//"))
        return usage_error("--pinned-pubkey: expected sha256//<base64 of the key's SHA-256>, as curl takes it");
    o.transport = transport == "rdma" ? Transport::rdma : transport == "tcp" ? Transport::tcp : Transport::auto_select;
    auto pool = byte_size_option(rdma_pool);
    if (!pool || *pool < (1u << 20) || *pool > (64ull << 30))
        return usage_error(std::string("--rdma-pool: ") + (pool ? "must be between 1M and 64G" : pool.error().message));
    o.rdma_pool = *pool;
    if (!device_size.empty()) {
        auto n = byte_size_option(device_size);
        if (!n) return usage_error("--size: " + n.error().message);
        o.size = *n;
    }
    if (want_progress) o.progress = true;
    if (no_progress) o.progress = false;
    o.block_checksums = !no_block_checksums;

    if (put->parsed()) {
        if (put_args.size() < 2) return usage_error("expected put LOCAL... URL");
        o.url = put_args.back();
        o.locals.assign(put_args.begin(), put_args.end() - 1);
        o.local = o.locals.front();
    } else if (get->parsed()) {
        if (get_args.size() < 2) return usage_error("expected get URL... LOCAL");
        o.local = get_args.back();
        o.urls.assign(get_args.begin(), get_args.end() - 1);
        o.url = o.urls.front();
    }

    if (put->parsed()) o.command = Command::put;
    else if (get->parsed()) o.command = Command::get;
    else if (ls->parsed()) o.command = Command::ls;
    else if (mkdir->parsed()) o.command = Command::mkdir;
    else if (rm->parsed()) o.command = Command::rm;
    else if (mv->parsed()) o.command = Command::mv;
    else o.command = Command::hash;
    // Accepted and then ignored, --size would leave the user believing it
    // counted (a get of that many bytes, or a tree of devices).
    if (o.size && (o.command != Command::put || o.many_files()))
        return usage_error("--size is for put from one device such as /dev/zero (how many bytes to send); " +
                           std::string(o.command == Command::put ? "not with several sources or -r" : "leave it out"));
    return ParsedCommandLine{std::move(o), 0};
}

}  // namespace rftp::client
