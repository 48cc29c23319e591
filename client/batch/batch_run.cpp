#include "client/batch/batch_run.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <utility>

#include "client/commands/transfer_steps.h"
#include "client/interrupt.h"
#include "client/progress/json_events.h"
#include "common/log.h"

namespace rftp::client {
namespace {

const char *result_name(const FileResult &r) {
    if (!r.failure) return r.report.skipped ? "skipped" : "ok";
    return r.failure->exit == ExitCode::interrupted ? "interrupted" : "error";
}

// After these the control connection's state is unknown (or gone): the next
// file gets a fresh session rather than a confused one.
bool session_is_spent(ExitCode exit) {
    return exit == ExitCode::connection || exit == ExitCode::transfer || exit == ExitCode::interrupted;
}

// Spends a session after a failure that leaves it unusable: a lost control
// connection gets no QUIT, the others a polite one.
void drop_spent_session(std::optional<Session> &session, const Failure &failure) {
    if (!session || !(session_is_spent(failure.exit) || session->out_of_step)) return;
    if (failure.exit != ExitCode::connection) close_session(*session);
    session.reset();
}

// What a new attempt can mend: the connection or the transfer broke (3, 8).
// Not a refusal, a local error or a mismatch, which would only recur.
bool worth_retrying(const Failure &f) { return f.exit == ExitCode::connection || f.exit == ExitCode::transfer; }

// 1 s, 2 s, 4 s ... at most 30 s between attempts.
std::chrono::seconds retry_pause(unsigned attempt) { return std::chrono::seconds(std::min(30u, 1u << std::min(attempt, 5u))); }

// false when interrupted meanwhile.
bool sleep_unless_interrupted(std::chrono::seconds pause) {
    const auto until = std::chrono::steady_clock::now() + pause;
    while (std::chrono::steady_clock::now() < until) {
        if (interrupted()) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return !interrupted();
}

}  // namespace

Outcome<Session> open_transfer_session(const CommandContext &ctx) {
    // With more than one session, the first asks for a ticket and the others log in with it.
    auto session = open_session(ctx.url, ctx.options, ctx.options.concurrency > 1 ? ctx.login_tickets : nullptr);
    if (!session) return std::unexpected(session.error());
    if (auto ok = prepare_transfer_session(*session, ctx.options); !ok) {
        close_session(*session);
        return std::unexpected(ok.error());
    }
    return session;
}

BatchRun::BatchRun(CommandContext &ctx) : ctx_(ctx) {}

void BatchRun::record_failure(FileJob job, Failure failure) {
    ++planned_;
    record(FileResult{std::move(job), {}, std::move(failure), 0});
}

void BatchRun::record(FileResult result) {
    std::lock_guard lock(mutex_);
    if (result.failure && !ctx_.options.continue_on_error) stop_.store(true);
    if (ctx_.options.json) {
        nlohmann::json ev{{"event", "file"},
                          {"path", result.job.remote},
                          {"local", result.job.local},
                          {"bytes", result.report.bytes},
                          {"seconds", result.seconds},
                          {"result", result_name(result)},
                          {"exit_code", to_int(result.failure ? result.failure->exit : ExitCode::ok)}};
        if (result.report.streams) ev["streams"] = result.report.streams;
        if (result.failure) ev["message"] = result.failure->message;
        emit_json_event(ev);
    }
    if (progress_) progress_->file_finished();
    results_.push_back(std::move(result));
}

void BatchRun::run(std::vector<FileJob> jobs, std::optional<Session> first, const FileAction &action,
                   const AheadAction &ahead, const AheadWindow &window) {
    planned_ += jobs.size();
    jobs_ = std::move(jobs);
    // Largest first: the sessions then finish together, small files filling
    // in around the large ones, instead of one large file starting last and
    // running alone. Ties keep their planned order.
    std::stable_sort(jobs_.begin(), jobs_.end(), [](const FileJob &a, const FileJob &b) {
        return a.size.has_value() && (!b.size || *a.size > *b.size);
    });
    next_job_.store(0);
    BatchProgress progress(ctx_.progress_view, planned_);
    {
        std::lock_guard lock(mutex_);
        progress_ = &progress;
        for (std::size_t i = 0; i < results_.size(); ++i) progress.file_finished();
    }
    progress.start();

    // One session per thread, never more threads than files.
    std::size_t sessions = std::max<std::size_t>(1, std::min<std::size_t>(ctx_.options.concurrency, jobs_.size()));
    if (logging_in_) logging_in_->keep_only(sessions - 1);  // the first is handed in
    // Counted before any thread starts, so none wrongly sees itself alone
    // while the others are still logging in.
    working_threads_.store(static_cast<int>(sessions));
    std::vector<std::thread> threads;
    threads.reserve(sessions);
    for (std::size_t i = 0; i < sessions; ++i) {
        std::optional<Session> handed;
        if (i == 0) handed.swap(first);  // planning's session moves on with the first thread
        threads.emplace_back([this, &action, &ahead, &window, s = std::move(handed)]() mutable {
            session_thread(Lane{.session = std::move(s), .action = action, .ahead = ahead, .window = window});
        });
    }
    for (auto &t : threads) t.join();
    // Given back as the other lanes ended too: failed, never lost. (One
    // put back without a failure is left only by a run that stopped.)
    std::vector<std::pair<std::size_t, std::optional<Failure>>> left;
    {
        std::lock_guard lock(mutex_);
        left.swap(given_back_);
    }
    for (auto &[index, why] : left)
        if (why) record(FileResult{jobs_[index], {}, *why, 0});
    std::lock_guard lock(mutex_);
    progress_ = nullptr;
}

void BatchRun::session_thread(Lane lane) {
    std::optional<Session> &session = lane.session;
    bool counted = true;  // in working_threads_ until this thread gives up or runs out of files
    auto leave = [&] {
        if (std::exchange(counted, false)) --working_threads_;
    };
    for (;;) {
        if (stop_.load() || interrupted()) break;
        if (!session) {
            // Log in before taking a file, so a session the server turns
            // away (too many from one address, say) costs no file while
            // other sessions are still moving them.
            auto opened = log_in();
            if (!opened) {
                if (opened.error().exit == ExitCode::interrupted) break;
                if (working_threads_.fetch_sub(1) > 1) {
                    counted = false;
                    log::warning("one session fewer: " + opened.error().message);
                    give_back(lane, opened.error());
                    return;
                }
                counted = false;
                // The run stopped meanwhile: no file was waiting for this login.
                if (stop_.load()) return;
                // No other thread is left to move files: the next one fails with this.
                if (auto index = next_file(lane)) record(FileResult{jobs_[*index], {}, opened.error(), 0});
                return;
            }
            session = std::move(*opened);
            // Another file may have failed while this one logged in.
            if (stop_.load() || interrupted()) break;
        }
        auto index = next_file(lane);
        if (!index) break;
        const FileJob &job = jobs_[*index];
        auto started = std::chrono::steady_clock::now();
        FileResult result{job, {}, std::nullopt, 0};
        if (auto moved = move_file(lane, job, result.report); !moved) result.failure = moved.error();
        result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        record(std::move(result));
    }
    leave();
    if (session) close_session(*session);
}

Outcome<Session> BatchRun::log_in() {
    if (logging_in_)
        if (auto early = logging_in_->take()) return std::move(*early);
    return open_transfer_session(ctx_);
}

std::optional<std::size_t> BatchRun::next_file(Lane &lane) {
    if (!lane.taken_early.empty()) {
        std::size_t early = lane.taken_early.front();
        lane.taken_early.pop_front();
        return early;
    }
    return take_from_queue();
}

std::optional<std::size_t> BatchRun::take_from_queue() {
    {
        std::lock_guard lock(mutex_);
        if (!given_back_.empty()) {
            std::size_t index = given_back_.back().first;
            given_back_.pop_back();
            return index;
        }
    }
    std::size_t index = next_job_.fetch_add(1);
    if (index >= jobs_.size()) return std::nullopt;
    return index;
}

void BatchRun::give_back(Lane &lane, const Failure &why) {
    std::lock_guard lock(mutex_);
    for (std::size_t early : lane.taken_early) given_back_.emplace_back(early, why);
    lane.taken_early.clear();
}

void BatchRun::put_back(std::size_t index) {
    std::lock_guard lock(mutex_);
    given_back_.emplace_back(index, std::nullopt);
}

std::function<void(Session &)> BatchRun::next_ahead_hook(Lane &lane, const FileJob &current) {
    if (!lane.ahead) return {};
    return [this, &lane, &current](Session &session) {
        const std::size_t window = lane.window ? std::max<std::size_t>(1, lane.window(session)) : 1;
        while (lane.taken_early.size() < window && !stop_.load()) {
            auto next = take_from_queue();
            if (!next) return;
            // Each file goes ahead behind the one before it in the window.
            const FileJob &before = lane.taken_early.empty() ? current : jobs_[lane.taken_early.back()];
            // Kept by this lane only when its commands went: else another lane
            // may start it while this one is still busy with current.
            if (!lane.ahead(session, before, jobs_[*next])) {
                put_back(*next);
                return;
            }
            lane.taken_early.push_back(*next);
        }
    };
}

OutcomeStatus BatchRun::move_file(Lane &lane, const FileJob &planned, FileReport &report) {
    std::optional<Session> &session = lane.session;
    const FileJob &job = planned;
    uint64_t earlier_bytes = 0;  // moved by attempts that then failed
    for (unsigned attempt = 0;; ++attempt) {
        OutcomeStatus moved;
        report = FileReport{};
        if (!session) {
            auto opened = open_transfer_session(ctx_);
            if (opened) session = std::move(*opened);
            else moved = std::unexpected(opened.error());
        }
        if (session) {
            FileProgressHooks hooks{ProgressView{}, progress_, next_ahead_hook(lane, job)};
            moved = lane.action(*session, job, hooks, report);
            if (!moved) drop_spent_session(session, moved.error());
        }
        report.bytes += earlier_bytes;
        if (moved || attempt >= ctx_.options.retries || !worth_retrying(moved.error()) || stop_.load()) return moved;
        earlier_bytes = report.bytes;
        const auto pause = retry_pause(attempt);
        log::warning(moved.error().message + "; trying " + job.remote + " again in " + std::to_string(pause.count()) +
                     " s (retry " + std::to_string(attempt + 1) + " of " + std::to_string(ctx_.options.retries) + ")");
        if (!sleep_unless_interrupted(pause)) return fail_as(ExitCode::interrupted, "interrupted");
        // job as planned: a new file continues its partial file (-c); one
        // that replaces an older version starts over, since -c would take
        // that version, complete by its size, for the copy.
    }
}

void BatchRun::fail_setup(Failure failure) {
    std::lock_guard lock(mutex_);
    setup_failure_ = std::move(failure);
    stop_.store(true);
}

std::vector<FileResult> BatchRun::results() {
    std::lock_guard lock(mutex_);
    return results_;
}

OutcomeStatus BatchRun::conclude() {
    std::lock_guard lock(mutex_);
    RunSummary &summary = ctx_.summary;
    FileCounts counts;
    counts.total = planned_;
    std::set<std::string> notes;
    const FileResult *first_failure = nullptr, *worst = nullptr;
    for (const auto &r : results_) {
        summary.bytes += r.report.bytes;
        summary.streams = std::max(summary.streams, r.report.streams);
        notes.insert(r.report.notes.begin(), r.report.notes.end());
        if (!r.failure) {
            ++(r.report.skipped ? counts.skipped : counts.ok);
            continue;
        }
        ++counts.failed;
        if (!first_failure) first_failure = &r;
        if (!worst || severity(r.failure->exit) > severity(worst->failure->exit)) worst = &r;
    }
    summary.notes.insert(summary.notes.end(), notes.begin(), notes.end());
    summary.files = counts;

    // Without a file -c would continue, no hint.
    const bool resumable = interrupted() || std::ranges::any_of(results_, [](const FileResult &r) {
        return r.failure && resumable_failure(r.failure->exit, r.report.bytes);
    });
    if (!resumable) summary.resume_hint.clear();

    const FileResult *chosen = ctx_.options.continue_on_error ? worst : first_failure;
    // A failure before any file moved (the destination, a lost session)
    // decides the run, unless a file's own failure is more severe.
    const bool setup_decides =
        setup_failure_ && (!chosen || severity(setup_failure_->exit) >= severity(chosen->failure->exit));
    if (interrupted() || setup_decides) chosen = nullptr;
    // main reports the deciding failure; every other one is said here, once:
    // a cause shared by many files (a refused directory) is one line.
    std::vector<std::pair<std::string, std::size_t>> others;  // message, files; in order of first failure
    for (const auto &r : results_) {
        if (!r.failure || &r == chosen || r.failure->exit == ExitCode::interrupted) continue;
        auto same = std::ranges::find(others, r.failure->message, &std::pair<std::string, std::size_t>::first);
        if (same != others.end()) ++same->second;
        else others.emplace_back(r.failure->message, 1);
    }
    for (const auto &[message, files] : others)
        log::error(files == 1 ? message : message + " (" + std::to_string(files) + " files)");
    if (interrupted()) return fail_as(ExitCode::interrupted, "interrupted");
    if (setup_decides) return std::unexpected(*setup_failure_);
    if (!chosen) return {};
    std::string message = chosen->failure->message;
    if (counts.failed > 1) message = std::to_string(counts.failed) + " files failed; " + message;
    return fail_as(chosen->failure->exit, message);
}

}  // namespace rftp::client
