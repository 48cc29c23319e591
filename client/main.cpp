// rftp (also rput/rget): parses the command line, runs one subcommand, and
// is the one place that reports how it ended: a message on stderr, a JSON
// "summary" event with --json, and the exit status from exit_codes.h.
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "client/cli/parse_command_line.h"
#include "client/commands/commands.h"
#include "client/exit_codes.h"
#include "client/interrupt.h"
#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "client/url.h"
#include "common/byte_size.h"
#include "common/log.h"

using namespace rftp::client;
using rftp::human_bytes;

namespace {

const char *command_name(Command c) {
    switch (c) {
        case Command::put: return "put";
        case Command::get: return "get";
        case Command::ls: return "ls";
        case Command::mkdir: return "mkdir";
        case Command::rm: return "rm";
        case Command::mv: return "mv";
        case Command::hash: return "hash";
        case Command::sync: return "sync";
        case Command::check: return "check";
    }
    return "?";
}

bool is_transfer(Command c) { return c == Command::put || c == Command::get || c == Command::sync; }

OutcomeStatus dispatch(CommandContext &ctx) {
    switch (ctx.options.command) {
        case Command::put: return run_put(ctx);
        case Command::get: return run_get(ctx);
        case Command::ls: return run_ls(ctx);
        case Command::mkdir: return run_mkdir(ctx);
        case Command::rm: return run_rm(ctx);
        case Command::mv: return run_mv(ctx);
        case Command::hash: return run_hash(ctx);
        case Command::sync: return run_sync(ctx);
        case Command::check: return run_check(ctx);
    }
    return fail_as(ExitCode::usage, "unknown command");
}

// Why what went to stdout did not all arrive; nothing when it did, or when
// its reader went away (a pipe whose reading end is closed polls as an error).
std::optional<std::string> stdout_lost() {
    flush_stdout();
    if (!stdout_error() && !std::ferror(stdout)) return std::nullopt;
    struct stat st {};
    if (::fstat(STDOUT_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        struct pollfd out {STDOUT_FILENO, POLLOUT, 0};
        if (::poll(&out, 1, 0) == 1 && (out.revents & (POLLERR | POLLHUP))) return std::nullopt;
    }
    return std::string(std::strerror(stdout_error() ? stdout_error() : EIO));
}

// "rftp: sync: 3 copied, 10 unchanged, 2 deleted, 0 failed of 13 files; ..."
std::string sync_summary_line(const FileCounts &f, uint64_t bytes, double seconds) {
    const std::size_t untried = f.total - f.ok - f.failed - f.skipped;
    std::string line = "rftp: sync: " + std::to_string(f.ok + f.skipped) + " copied, " + std::to_string(f.unchanged) +
                       " unchanged, " + std::to_string(f.deleted) + " deleted, " + std::to_string(f.failed) + " failed";
    if (untried) line += ", " + std::to_string(untried) + " not attempted";
    char tail[96];
    std::snprintf(tail, sizeof tail, "; %s in %.2f s (%s/s)\n", human_bytes(static_cast<double>(bytes)).c_str(), seconds,
                  human_bytes(seconds > 0 ? static_cast<double>(bytes) / seconds : 0).c_str());
    return line + tail;
}

// --json promises a summary last, whatever went wrong; a usage error's has
// what any summary has, nothing having moved.
void emit_usage_summary(const std::string &command, const std::string &message) {
    nlohmann::json summary{{"event", "summary"}, {"result", "error"}, {"bytes", 0}, {"seconds", 0.0}, {"rate", 0.0},
                           {"streams", 0}, {"exit_code", to_int(ExitCode::usage)}, {"message", message}};
    if (!command.empty()) summary["command"] = command;
    emit_json_event(summary);
}

}  // namespace

int main(int argc, char **argv) {
    ParsedCommandLine parsed = parse_command_line(argc, argv);
    if (!parsed.options) {
        if (parsed.exit_status != 0 && parsed.json) emit_usage_summary(parsed.command, parsed.error);
        return parsed.exit_status;
    }
    const Options &o = *parsed.options;

    namespace log = rftp::log;
    log::set_threshold(o.quiet ? log::Level::error
                       : o.verbose >= 2 ? log::Level::debug
                       : o.verbose == 1 ? log::Level::info
                                        : log::Level::notice);
    // check --manifest of a local tree names no server at all.
    // sync --job runs other rftp processes, each naming its own.
    const bool no_server = (o.command == Command::check || o.command == Command::sync) && o.url.empty();
    auto url = no_server ? rftp::Result<Url>(Url{}) : rftp::client::parse_url(o.url);
    if (!url) {
        std::fprintf(stderr, "rftp: %s\n", log::printable(url.error().message).c_str());
        if (o.json) emit_usage_summary(command_name(o.command), url.error().message);
        return to_int(ExitCode::usage);
    }
    install_interrupt_handlers();

    ProgressView view;
    view.json = o.json && is_transfer(o.command);
    view.terminal_line = is_transfer(o.command) && !o.quiet && o.progress.value_or(::isatty(STDERR_FILENO) == 1);
    CommandContext ctx{o, *url, view, {}};
    if (view.json) {
        nlohmann::json start{{"event", "start"}, {"command", command_name(o.command)}, {"url", o.url},
                             {"local", o.local}, {"parallel", nullptr}};
        // Without -P the TCP streams are chosen per file (the summary's streams).
        if (o.parallel_given) start["parallel"] = o.parallel;
        if (o.many_files()) {
            if (o.command == Command::put) {
                start["sources"] = o.locals;
            } else {
                // Checked one by one later; none may carry a password into the log.
                std::vector<std::string> shown;
                for (const auto &u : o.urls) shown.push_back(rftp::client::without_password(u));
                start["sources"] = shown;
            }
            start["concurrency"] = o.concurrency;
            start["recursive"] = o.recursive;
        }
        emit_json_event(start);
    }

    auto started = std::chrono::steady_clock::now();
    OutcomeStatus result = dispatch(ctx);
    // What went to stdout (a listing, a digest, JSON events) must have
    // arrived: `rftp ls URL > listing.txt` on a full disk is no success. A
    // reader that stopped reading (`| head`) only wanted no more.
    if (auto lost = stdout_lost(); lost && result)
        result = fail_as(ExitCode::local_file, "writing to standard output failed: " + *lost);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ExitCode exit = result ? ExitCode::ok : result.error().exit;
    const RunSummary &s = ctx.summary;
    double rate = seconds > 0 ? static_cast<double>(s.bytes) / seconds : 0;

    if (s.jobs && !o.quiet && !o.json) {
        std::fprintf(stderr, "rftp: sync --job: %zu replications, %zu ok, %zu failed\n", s.jobs->total, s.jobs->ok,
                     s.jobs->failed);
    } else if (s.files && !o.quiet && !o.json && o.command == Command::sync) {
        std::fputs(sync_summary_line(*s.files, s.bytes, seconds).c_str(), stderr);
    } else if (s.files && !o.quiet && !o.json && o.command == Command::check) {
        std::fprintf(stderr, "rftp: check: %zu of %zu files the same\n", s.files->unchanged, s.files->total);
    } else if (s.files && !o.quiet && !o.json) {
        // Many files: one line that says how every file ended, success or not.
        const FileCounts &f = *s.files;
        std::size_t untried = f.total - f.ok - f.failed - f.skipped;
        std::string line = std::string("rftp: ") + command_name(o.command) + ": " + std::to_string(f.ok) + " ok, " +
                           std::to_string(f.failed) + " failed, " + std::to_string(f.skipped) + " skipped";
        if (untried) line += ", " + std::to_string(untried) + " not attempted";
        char tail[96];
        std::snprintf(tail, sizeof tail, " of %zu files; %s in %.2f s (%s/s)\n", f.total,
                      human_bytes(static_cast<double>(s.bytes)).c_str(), seconds, human_bytes(rate).c_str());
        line += tail;
        std::fputs(line.c_str(), stderr);
    }
    // Many files: the run keeps the hint only when some file can be
    // continued, whichever failure decided the exit status.
    const bool resumable = !s.resume_hint.empty() && (s.files || resumable_failure(exit, s.bytes));
    if (!result) {
        // The message may quote a server's reply or a name from its listing.
        std::fprintf(stderr, "rftp: %s\n", log::printable(result.error().message).c_str());
        if (resumable)
            std::fprintf(stderr, "rftp: %s kept; resume with: %s\n",
                         s.files ? "partial files are" : "the partial file is", s.resume_hint.c_str());
    } else if (is_transfer(o.command) && !o.quiet && !o.json && !s.files) {
        log::info(std::string(command_name(o.command)) + " done: " + human_bytes(static_cast<double>(s.bytes)) + " in " +
                  std::to_string(seconds) + " s (" + human_bytes(rate) + "/s, " + std::to_string(s.streams) + " stream(s)" +
                  (s.tls_data == "tls" ? ", TLS" : "") + ")");
    }
    if (o.json) {
        nlohmann::json summary{{"event", "summary"}, {"command", command_name(o.command)},
                               {"result", result ? "ok" : exit == ExitCode::interrupted ? "interrupted" : "error"},
                               {"bytes", s.bytes}, {"seconds", seconds}, {"rate", rate}, {"streams", s.streams},
                               {"exit_code", to_int(exit)}};
        if (!result) summary["message"] = result.error().message;
        if (!result && resumable) summary["resume"] = s.resume_hint;
        if (!s.notes.empty()) summary["notes"] = s.notes;
        if (!s.transport.empty()) summary["transport"] = s.transport;
        if (!s.notice.empty()) summary["rdma_notice"] = s.notice;
        if (!s.tls_data.empty()) summary["protection"] = {{"control", s.tls_control.empty() ? "clear" : s.tls_control},
                                                           {"data", s.tls_data}};
        if (!s.tls_path.empty()) summary["protection"]["data_records"] = s.tls_path;
        if (s.transfer_seconds > 0) summary["transfer_seconds"] = s.transfer_seconds;
        if (s.jobs) summary["jobs"] = {{"total", s.jobs->total}, {"ok", s.jobs->ok}, {"failed", s.jobs->failed}};
        if (s.files) {
            summary["files"] = {{"total", s.files->total}, {"ok", s.files->ok}, {"failed", s.files->failed},
                                {"skipped", s.files->skipped}};
            if (o.command == Command::sync || o.command == Command::check)
                summary["files"]["unchanged"] = s.files->unchanged;
            if (o.command == Command::sync) summary["files"]["deleted"] = s.files->deleted;
        }
        emit_json_event(summary);
    }
    if (exit == ExitCode::interrupted) {
        std::fflush(stdout);
        die_of_the_interrupting_signal();
    }
    return to_int(exit);
}
