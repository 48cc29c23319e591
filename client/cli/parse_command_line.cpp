#include "client/cli/parse_command_line.h"

#include <cstdlib>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <set>

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

bool is_url(const std::string &text) { return text.find("://") != std::string::npos; }

// --include and --exclude in the order given: the first that matches
// decides, so their order is part of their meaning (CLI11 keeps each
// option's values apart). Both "--include X" and "--include=X".
std::vector<FilterRule> filter_rules_in_order(const std::vector<std::string> &args) {
    std::vector<FilterRule> rules;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "--") break;
        for (const auto &[name, include] : {std::pair{"--include", true}, std::pair{"--exclude", false}}) {
            const std::string flag = name;
            if (a == flag && i + 1 < args.size()) rules.push_back({include, args[++i]});
            else if (a.starts_with(flag + "=")) rules.push_back({include, a.substr(flag.size() + 1)});
        }
    }
    return rules;
}

// "100" or "5%" for --max-delete.
bool parse_max_delete(const std::string &text, SyncOptions &sync) {
    std::string digits = text;
    sync.max_delete_percent = digits.ends_with('%');
    if (sync.max_delete_percent) digits.pop_back();
    auto n = parse_byte_size(digits);
    if (!n || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    if (sync.max_delete_percent && *n > 100) return false;
    sync.max_delete = *n;
    return true;
}

// SRC DST of sync (one a URL), or check's one or two trees: fills
// o.url, o.local and the direction. Returns a usage error, or "".
std::string read_sync_operands(const std::vector<std::string> &operands, bool is_sync, Options &o) {
    if (operands.size() == 1) {
        if (o.sync.manifest.empty()) return "check of one tree compares it with a --manifest FILE; give SRC DST or one";
        (is_url(operands[0]) ? o.url : o.local) = operands[0];
        return "";
    }
    const bool first_is_url = is_url(operands[0]), second_is_url = is_url(operands[1]);
    if (first_is_url == second_is_url)
        return std::string(is_sync ? "sync" : "check") + " needs a local directory and a URL (rftp://, ftp://, ftps://), "
                                                          "one each; got " + (first_is_url ? "two URLs" : "two local paths");
    o.sync.upload = second_is_url;
    o.url = operands[first_is_url ? 0 : 1];
    o.local = operands[first_is_url ? 1 : 0];
    return "";
}

// With --job the file says everything; only how the run reports and how
// many replications go side by side (-P) come from the command line.
std::string check_job_options(const CLI::App &app, const std::vector<std::string> &operands) {
    if (!operands.empty()) return "sync --job FILE takes no SRC DST: each replication names its own";
    static const std::set<std::string> allowed = {"--json", "--quiet", "--verbose", "--parallel", "--job",
                                                  "--progress", "--no-progress", "--help"};
    for (const CLI::App *scope : std::initializer_list<const CLI::App *>{&app, app.get_subcommand("sync")})
        for (const CLI::Option *opt : scope->get_options())
            if (opt->count() > 0 && !allowed.contains(opt->get_name()))
                return opt->get_name() + " does not go with --job: set it in the job file (docs/cli.md \"Job files\")";
    return "";
}

// --shard and --finish take their trees and choices from the plan; what
// the plan settled cannot be changed by one mover.
std::string check_planned_options(const Options &o, const std::vector<std::string> &operands) {
    const SyncOptions &s = o.sync;
    if (s.plan_file.empty()) return "--shard and --finish carry out a plan: give --plan FILE";
    if (!s.shard.empty() && s.finish) return "--shard copies a share, --finish ends the run: one of them";
    if (s.plan_only) return "--plan-only writes the plan; --shard and --finish carry it out later";
    if (!operands.empty()) return "the plan names SRC and DST; leave them out";
    return "";
}

// Options of sync and check given to another command would be ignored
// silently, and the user would believe them in force: refused instead.
std::string check_sync_options(Options &o, const std::string &compare, bool checksum_flag,
                               const std::string &max_delete, const std::vector<std::string> &args) {
    SyncOptions &s = o.sync;
    const bool is_sync = o.command == Command::sync, is_check = o.command == Command::check;
    s.filters = filter_rules_in_order(args);
    const bool any = !compare.empty() || checksum_flag || s.remove_extraneous || !max_delete.empty() || s.dry_run ||
                     !s.filters.empty() || !s.files_from.empty() || s.from0 || !s.manifest.empty() ||
                     !s.unfinished.empty() || !s.backup_dir.empty();
    if (!is_sync && !is_check) return any ? "--compare, --checksum, --delete, --max-delete, --dry-run, --include, "
                                            "--exclude, --files-from, --from0, --manifest, --unfinished and --backup-dir are for sync and check" : "";
    if (is_check && (s.remove_extraneous || !max_delete.empty() || s.dry_run || !s.unfinished.empty() ||
                     !s.backup_dir.empty()))
        return "--delete, --max-delete, --dry-run, --unfinished and --backup-dir are for sync; check changes nothing";
    if (checksum_flag && !compare.empty() && compare != "checksum")
        return "--checksum and --compare " + compare + " contradict each other";
    if (checksum_flag || compare == "checksum") s.compare = Compare::checksum;
    else if (compare == "size") s.compare = Compare::size;
    if (!max_delete.empty() && !parse_max_delete(max_delete, s))
        return "--max-delete: expected a number of files or a percentage such as 5%, got '" + max_delete + "'";
    if (s.max_delete && !s.remove_extraneous) return "--max-delete limits --delete; give --delete too";
    if (s.from0 && s.files_from.empty() && s.unfinished.empty())
        return "--from0 says how --files-from and --unfinished lists are separated; give one of them";
    if (!s.files_from.empty() && s.remove_extraneous)
        return "--delete with --files-from would judge the whole destination by a partial list; run them apart";
    if (o.resume) return "sync continues partial files by itself; leave out -c";
    if (o.recursive) return std::string(is_sync ? "sync" : "check") + " always takes whole trees; leave out -r";
    if (is_sync && (!s.shard.empty() || s.finish) &&
        (!compare.empty() || checksum_flag || s.remove_extraneous || !max_delete.empty() || s.dry_run ||
         !s.filters.empty() || !s.files_from.empty() || !s.backup_dir.empty()))
        return "the plan holds what --compare, --delete, --max-delete, --backup-dir, filters and --files-from chose; "
               "give them with --plan-only";
    if (is_sync && s.plan_only && (s.plan_file.empty() || s.dry_run || !s.manifest.empty() || !s.unfinished.empty()))
        return s.plan_file.empty() ? "--plan-only writes --plan FILE: give it"
                                   : "--plan-only copies nothing: --dry-run, --manifest and --unfinished go with "
                                     "--shard or --finish";
    if (is_sync && !s.plan_file.empty() && !s.plan_only && s.shard.empty() && !s.finish)
        return "--plan FILE goes with --plan-only, --shard K/N or --finish";
    // A manifest vouches for what the destination holds: each copy's digest
    // is checked against the server's HASH, as --verify does.
    if (is_sync && !s.manifest.empty()) o.verify = true;
    s.command_line = args;
    return "";
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

    auto *parallel_opt = app.add_option("-P,--parallel", o.parallel,
                                        "data connections (TCP; default: as many as fill the path, up to 8) or "
                                        "queue pairs (RDMA; default 1) for one file (rftpd only)")
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
    std::optional<unsigned> retries;
    app.add_option("--retries", retries, "with many files and sync: try a file again up to N times after a broken "
                                         "connection or transfer (default 0; sync: 3)")
        ->check(CLI::Range(0, 100));
    app.add_flag("--continue-on-error", o.continue_on_error,
                 "with many files, go on after a failed file (exit with the most severe code)");

    // sync and check (docs/cli.md "Sync").
    std::string compare, max_delete;
    bool checksum_flag = false;
    std::vector<std::string> includes, excludes;  // read in order by filter_rules_in_order
    app.add_option("--compare", compare, "sync/check: what makes a file changed: size, mtime (size and "
                                         "modification time, the default), checksum (size and SHA-256)")
        ->check(CLI::IsMember({"size", "mtime", "checksum"}));
    app.add_flag("--checksum", checksum_flag, "sync/check: the same as --compare checksum");
    app.add_flag("--delete", o.sync.remove_extraneous,
                 "sync: remove destination files the source lacks, after every copy succeeded");
    app.add_option("--max-delete", max_delete, "sync: delete nothing if more than N files (or N% of the "
                                                "destination's) would go; exit 9");
    app.add_flag("-n,--dry-run", o.sync.dry_run, "sync: show what would be done and do nothing");
    // One pattern per --include/--exclude: a vector option would swallow SRC DST too.
    app.add_option("--include", includes, "sync/check: include paths matching this pattern (first match wins)")
        ->allow_extra_args(false);
    app.add_option("--exclude", excludes, "sync/check: exclude paths matching this pattern (first match wins)")
        ->allow_extra_args(false);
    app.add_option("--files-from", o.sync.files_from, "sync/check: only the paths listed in FILE (- for stdin)");
    app.add_flag("--from0", o.sync.from0, "sync/check: --files-from names are separated by NUL, not newlines");
    app.add_option("--backup-dir", o.sync.backup_dir,
                   "sync: move what would be deleted or overwritten into DIR (on the destination's side; "
                   "relative: beneath its top)");
    app.add_option("--unfinished", o.sync.unfinished,
                   "sync: list the files a failed run did not finish in FILE, for --files-from to take back");
    app.add_option("--manifest", o.sync.manifest,
                   "sync: write what the destination holds to FILE; check: compare the tree with FILE");

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
    std::vector<std::string> sync_args, check_args;
    auto *sync = app.add_subcommand("sync", "make DST a copy of SRC: a local directory and a URL, either way round");
    sync->add_option("SRC DST", sync_args, "source and destination; one of them a URL")->expected(2);
    sync->add_option("--job", o.sync.job_file, "run the replications of this YAML job file; -P N runs N side by side");
    sync->add_option("--plan", o.sync.plan_file, "the plan file of a sync over many movers (with --plan-only, "
                                                 "--shard or --finish)");
    sync->add_flag("--plan-only", o.sync.plan_only, "list and plan SRC DST into --plan FILE; copy nothing");
    sync->add_option("--shard", o.sync.shard, "copy share K/N of --plan FILE (auto: from a Slurm array task; "
                                              "auto/N: from JOB_COMPLETION_INDEX)");
    sync->add_flag("--finish", o.sync.finish, "after every share of --plan FILE: check, then --delete as planned");
    auto *check = app.add_subcommand("check", "compare two trees (a local directory and a URL), or one tree with "
                                              "--manifest; exit 0 only if nothing differs");
    check->add_option("TREE", check_args, "SRC DST, or the one tree a --manifest describes")->required()->expected(1, 2);

    // A usage error keeps what --json needs for its summary (main.cpp).
    ParsedCommandLine refused{std::nullopt, to_int(ExitCode::usage)};
    for (const auto &a : args) {
        if (a == "--json") refused.json = true;
        if (refused.command.empty())
            for (const char *name : {"put", "get", "ls", "mkdir", "rm", "mv", "hash", "sync", "check"})
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
    o.parallel_given = parallel_opt->count() > 0;
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

    if (sync->parsed() && !o.sync.job_file.empty()) {
        if (auto bad = check_job_options(app, sync_args); !bad.empty()) return usage_error(bad);
    } else if (sync->parsed() && (!o.sync.shard.empty() || o.sync.finish)) {
        if (auto bad = check_planned_options(o, sync_args); !bad.empty()) return usage_error(bad);
    } else if (sync->parsed() && sync_args.empty()) {
        return usage_error("expected sync SRC DST, sync --job FILE.yaml, or sync --plan FILE --shard K/N or --finish");
    } else if (sync->parsed() || check->parsed()) {
        if (auto bad = read_sync_operands(sync->parsed() ? sync_args : check_args, sync->parsed(), o); !bad.empty())
            return usage_error(bad);
    }

    if (put->parsed()) o.command = Command::put;
    else if (get->parsed()) o.command = Command::get;
    else if (ls->parsed()) o.command = Command::ls;
    else if (mkdir->parsed()) o.command = Command::mkdir;
    else if (rm->parsed()) o.command = Command::rm;
    else if (mv->parsed()) o.command = Command::mv;
    else if (sync->parsed()) o.command = Command::sync;
    else if (check->parsed()) o.command = Command::check;
    else o.command = Command::hash;
    if (auto bad = check_sync_options(o, compare, checksum_flag, max_delete, args); !bad.empty()) return usage_error(bad);
    o.retries = retries.value_or(o.command == Command::sync ? 3 : 0);
    if (retries && !o.many_files() && o.command != Command::sync)
        return usage_error("--retries is for many files (several, or -r) and sync; rerun a single file with -c");
    // Accepted and then ignored, --size would leave the user believing it
    // counted (a get of that many bytes, or a tree of devices).
    if (o.size && (o.command != Command::put || o.many_files()))
        return usage_error("--size is for put from one device such as /dev/zero (how many bytes to send); " +
                           std::string(o.command == Command::put ? "not with several sources or -r" : "leave it out"));
    return ParsedCommandLine{std::move(o), 0};
}

}  // namespace rftp::client
