#include "client/sync/job_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "client/interrupt.h"
#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "common/log.h"
#include "common/unique_fd.h"

extern char **environ;

namespace rftp::client {
namespace {

// One replication under way: its process and the two pipes it writes.
struct Child {
    const SyncJob *job = nullptr;
    pid_t pid = -1;
    UniqueFd out, err;
    std::string out_line, err_line;  // a line not yet ended
    bool forwarded_interrupt = false;
};

// The options of this run that every replication shares.
std::vector<std::string> shared_options(const Options &o) {
    std::vector<std::string> args;
    if (o.json) args.emplace_back("--json");
    if (o.quiet) args.emplace_back("--quiet");
    for (int i = 0; i < o.verbose; ++i) args.emplace_back("-v");
    args.emplace_back("--no-progress");
    return args;
}

Outcome<Child> start(const SyncJob &job, const Options &o) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return fail_as(ExitCode::local_file, std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]), ::close(out[1]);
        return fail_as(ExitCode::local_file, std::string("pipe: ") + std::strerror(errno));
    }
    Child child{&job, -1, UniqueFd(out[0]), UniqueFd(err[0]), {}, {}, false};
    UniqueFd out_w(out[1]), err_w(err[1]);
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, out_w.get(), STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, err_w.get(), STDERR_FILENO);
    std::vector<std::string> args{"rftp"};
    for (auto &a : shared_options(o)) args.push_back(a);
    args.insert(args.end(), job.args.begin(), job.args.end());
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawn(&child.pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return fail_as(ExitCode::local_file, "cannot start the replication " + job.name + ": " + std::strerror(rc));
    return child;
}

// A whole line a child printed on stdout (with_json: an event) or stderr.
void pass_on(const Child &c, const std::string &line, bool from_stdout, bool with_json) {
    if (from_stdout && with_json) {
        auto event = nlohmann::json::parse(line, nullptr, false);
        if (event.is_object()) {
            if (event["event"] == "summary") event["event"] = "job";
            event["job"] = c.job->name;
            emit_json_event(event);
            return;
        }
    }
    const std::string text = "[" + c.job->name + "] " + line + "\n";
    if (from_stdout) print_to_stdout(text);
    else std::fputs(text.c_str(), stderr);
}

// Reads what is there; false once the pipe is closed.
bool drain(Child &c, bool from_stdout, bool with_json) {
    UniqueFd &fd = from_stdout ? c.out : c.err;
    std::string &pending = from_stdout ? c.out_line : c.err_line;
    char buf[65536];
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) return true;
    if (n <= 0) {
        if (!pending.empty()) pass_on(c, pending, from_stdout, with_json);
        pending.clear();
        fd = UniqueFd();
        return false;
    }
    pending.append(buf, static_cast<std::size_t>(n));
    for (std::size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
        pass_on(c, pending.substr(0, nl), from_stdout, with_json);
        pending.erase(0, nl + 1);
    }
    return true;
}

// How the child ended, as this run's exit codes say it.
ExitCode exit_of(int status) {
    if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM ? ExitCode::interrupted
                                                                                               : ExitCode::transfer;
    const int code = WEXITSTATUS(status);
    for (ExitCode c : {ExitCode::ok, ExitCode::differs, ExitCode::usage, ExitCode::connection, ExitCode::auth,
                       ExitCode::remote_file, ExitCode::local_file, ExitCode::verification, ExitCode::transfer,
                       ExitCode::delete_limit, ExitCode::interrupted})
        if (to_int(c) == code) return c;
    return ExitCode::transfer;
}

struct JobOutcome {
    std::string name;
    ExitCode exit = ExitCode::ok;
};

// Waits for output from any child; returns those that ended.
std::vector<JobOutcome> pump(std::vector<Child> &running, bool with_json) {
    std::vector<pollfd> fds;
    for (auto &c : running) {
        fds.push_back({c.out ? c.out.get() : -1, POLLIN, 0});
        fds.push_back({c.err ? c.err.get() : -1, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), 200) < 0 && errno != EINTR) return {};
    for (std::size_t i = 0; i < running.size(); ++i) {
        if (fds[2 * i].revents) drain(running[i], true, with_json);
        if (fds[2 * i + 1].revents) drain(running[i], false, with_json);
        // A signal for this run is one for each replication too (kill PID
        // reaches only this process; Ctrl-C reaches all of them already).
        if (interrupted() && !std::exchange(running[i].forwarded_interrupt, true)) ::kill(running[i].pid, SIGINT);
    }
    std::vector<JobOutcome> ended;
    std::erase_if(running, [&](Child &c) {
        if (c.out || c.err) return false;
        int status = 0;
        while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {}
        ended.push_back({c.job->name, exit_of(status)});
        return true;
    });
    return ended;
}

void tell(const CommandContext &ctx, const JobOutcome &j) {
    if (ctx.options.json) return;  // the child's own summary, now a "job" event, said it
    if (!ctx.options.quiet && j.exit != ExitCode::ok)
        std::fprintf(stderr, "rftp: replication %s failed (exit %d)\n", j.name.c_str(), to_int(j.exit));
}

}  // namespace

OutcomeStatus run_sync_jobs(CommandContext &ctx, const std::vector<SyncJob> &jobs, unsigned side_by_side) {
    std::vector<Child> running;
    std::vector<JobOutcome> outcomes;
    std::size_t next = 0;
    while (next < jobs.size() || !running.empty()) {
        while (next < jobs.size() && running.size() < std::max(1u, side_by_side) && !interrupted()) {
            auto child = start(jobs[next++], ctx.options);
            if (!child) {
                log::error(child.error().message);
                outcomes.push_back({jobs[next - 1].name, child.error().exit});
                continue;
            }
            running.push_back(std::move(*child));
        }
        if (interrupted() && running.empty()) break;
        for (auto &ended : pump(running, ctx.options.json)) {
            tell(ctx, ended);
            outcomes.push_back(std::move(ended));
        }
    }
    FileCounts counts;
    const JobOutcome *worst = nullptr;
    for (const auto &o : outcomes) {
        ++counts.total;
        ++(o.exit == ExitCode::ok ? counts.ok : counts.failed);
        if (o.exit != ExitCode::ok && (!worst || severity(o.exit) > severity(worst->exit))) worst = &o;
    }
    counts.total += jobs.size() - next;  // never started, after an interrupt
    ctx.summary.jobs = counts;
    if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
    if (!worst) return {};
    return fail_as(worst->exit, std::to_string(counts.failed) + " of " + std::to_string(jobs.size()) +
                                    " replications failed; the most severe: " + worst->name);
}

}  // namespace rftp::client
