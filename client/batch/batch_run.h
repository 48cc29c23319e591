// Runs the files of a many-file transfer: N sessions, each logged in once
// and on its own thread, take files from one shared queue and move each with
// the same per-file function the single-file command uses. Collects every
// file's result (JSON "file" events as they finish), stops at the first
// failure unless --continue-on-error, and folds the results into the run's
// summary and exit status.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "client/batch/file_job.h"
#include "client/batch/sessions_logging_in.h"
#include "client/commands/command_context.h"
#include "client/progress/batch_progress.h"
#include "client/session.h"

namespace rftp::client {

// Moves one file over a prepared session (TYPE I, HASH checked).
using FileAction = std::function<OutcomeStatus(Session &, const FileJob &, const FileProgressHooks &, FileReport &)>;
// Sends the commands of the file a session moves next (next) while the one
// before it (current) moves, when it can tell them all in advance
// (docs/protocol.md, "Files in a row"); else sends nothing. true: sent.
using AheadAction = std::function<bool(Session &, const FileJob &current, const FileJob &next)>;
// How many files a session may have sent ahead at once (1 when empty).
using AheadWindow = std::function<std::size_t(const Session &)>;

// A logged-in session ready for transfers (prepare_transfer_session done).
Outcome<Session> open_transfer_session(const CommandContext &ctx);

class BatchRun {
public:
    explicit BatchRun(CommandContext &ctx);

    // A file that failed before any transfer (missing source, unsafe name...).
    void record_failure(FileJob job, Failure failure);
    // Whether planning failures already end the run (no --continue-on-error).
    bool stopped() const { return stop_.load(); }
    // Files that were planned but will not be attempted (the run stopped first).
    void count_unattempted(std::size_t files) { planned_ += files; }

    // A failure before any file could move (the remote destination, the
    // session lost while preparing): nothing more is attempted, and the run
    // ends with it unless a file's own failure is more severe.
    void fail_setup(Failure failure);

    // The sessions after the first come from these logins, begun while
    // the first one planned (each thread takes one; a login that failed
    // counts as this thread's own). They must outlive run().
    void take_sessions_from(SessionsLoggingIn &logins) { logging_in_ = &logins; }

    // Moves the files; first is the session planning used, handed to one
    // thread. With ahead, each session takes its next file as the current
    // one's data has moved, and ahead may send its commands then.
    void run(std::vector<FileJob> jobs, std::optional<Session> first, const FileAction &action,
             const AheadAction &ahead = {}, const AheadWindow &window = {});

    // Fills ctx.summary and returns how the run ended: the first failure, or
    // with --continue-on-error the most severe one; 130 after an interrupt.
    OutcomeStatus conclude();

    // Every file's result so far, in the order they finished.
    std::vector<FileResult> results();

private:
    void record(FileResult result);
    // What one session moves, file after file.
    struct Lane {
        std::optional<Session> session;
        const FileAction &action;
        const AheadAction &ahead;
        const AheadWindow &window;
        // The next files, taken as the one before them moved, in order.
        std::deque<std::size_t> taken_early;
    };
    void session_thread(Lane lane);
    // A thread's session: one logged in early, else a login now.
    Outcome<Session> log_in();
    // The next file for this lane: the first it took early, else the queue's next.
    std::optional<std::size_t> next_file(Lane &lane);
    // The queue's next file: one given back first.
    std::optional<std::size_t> take_from_queue();
    // One file, tried again up to --retries times after a broken connection
    // or transfer, each time on a new session and continuing the partial file.
    OutcomeStatus move_file(Lane &lane, const FileJob &job, FileReport &report);
    // The hook that takes the lane's next file early and sends its commands ahead.
    std::function<void(Session &)> next_ahead_hook(Lane &lane, const FileJob &current);
    // A lane that stops with files taken early hands them to the others;
    // why it stopped is their failure if none of them takes them.
    void give_back(Lane &lane, const Failure &why);
    // A file taken to send its commands ahead, which then were not: the
    // next lane to ask takes it, as if it had never left the queue.
    void put_back(std::size_t index);

    CommandContext &ctx_;
    std::mutex mutex_;
    std::vector<FileResult> results_;  // in the order files finished
    std::atomic<bool> stop_{false};
    std::size_t planned_ = 0;          // files handed to run(), plus recorded failures
    std::vector<FileJob> jobs_;
    std::atomic<std::size_t> next_job_{0};
    // Files back from lanes, served before the queue; under mutex_. A
    // failure: the lane that gave it back stopped, and says why.
    std::vector<std::pair<std::size_t, std::optional<Failure>>> given_back_;
    std::atomic<int> working_threads_{0};  // session threads not yet given up or finished
    std::optional<Failure> setup_failure_;
    BatchProgress *progress_ = nullptr;
    SessionsLoggingIn *logging_in_ = nullptr;
};

}  // namespace rftp::client
