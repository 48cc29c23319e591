// Blocks of a parallel transfer land out of order, so after a crash the size
// of a partial file says nothing about which of its bytes are good. The
// journal, a tiny file beside it, records the length of the prefix known to
// be complete; a resume starts there. Written only after the bytes it vouches
// for, so it may lag behind the file but never run ahead of it.
//
// It keeps two prefixes. The written one holds whatever the process saw
// complete: the page cache keeps it if only the process dies. The durable one
// holds what a sync of the file made safe from a power loss: every few
// seconds a checkpoint syncs the file, then records the prefix that was
// complete before it. The journal names the boot it was written in; read in
// another boot (the machine went down), only the durable prefix counts.
//
// The line: "<written, 20 wide> <durable, 20 wide> <boot id>\n". A journal
// of one number (rftp before 2026-11-25) is its written prefix.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "common/result.h"
#include "common/unique_fd.h"

namespace rftp::middleware {

// Five seconds: a power loss costs at most about that much of the transfer,
// and one fdatasync per interval costs nothing measurable beside it.
// RFTP_TEST_CHECKPOINT_MS overrides it (test-only).
std::chrono::milliseconds default_checkpoint_interval();

struct Checkpoints {
    // The file the journal vouches for; -1: it is never synced, so after a
    // power loss nothing of it is vouched for (a resume starts over).
    int data_fd = -1;
    std::chrono::milliseconds every = default_checkpoint_interval();
};

class ResumeJournal {
public:
    // Creates (or truncates) the journal at path and records start, which
    // was complete already (a resume). With a data_fd, a checkpoint follows
    // every interval, on a thread of its own: a resumed start is synced at
    // once; otherwise the thread starts at the first record() an interval
    // after creation. A transfer that ends sooner (a small file) costs no
    // thread: starting and ending one for every file of many was an eighth
    // of rftpd's CPU for 256 KiB uploads (docs/benchmarks.md). The price: a
    // transfer that stalls within its first interval has nothing durable
    // until it moves again, so a power loss then costs that interval's bytes.
    static Result<std::unique_ptr<ResumeJournal>> create(const std::string &path, uint64_t start, Checkpoints c = {});
    // The same on a journal file already opened for writing (and truncated).
    static Result<std::unique_ptr<ResumeJournal>> create(UniqueFd fd, uint64_t start, Checkpoints c = {});

    ResumeJournal(const ResumeJournal &) = delete;
    ResumeJournal &operator=(const ResumeJournal &) = delete;
    ~ResumeJournal() = default;  // the checkpoint thread stops first (declared last)

    // Records a longer complete prefix; shorter or equal values are ignored.
    // Safe from several threads; never waits for a sync. Where no thread
    // can be started, there are no checkpoints: the written prefix still
    // serves a resume after the process died, and a power loss starts over.
    void record(uint64_t prefix);

    // While a transfer runs, a checkpoint whose sync fails raises its stop
    // flag: nothing written from then on could be trusted, so going on would
    // only move bytes to throw away. nullptr detaches. A sync that failed
    // already raises it at once. See StopOnFailedCheckpoint.
    void stop_transfer_on_failure(std::atomic<bool> *flag);

    // Stops the checkpoints (waiting for one under way). Fails when a
    // checkpoint's sync failed: the kernel reports a lost write only once,
    // so a later sync of the file would vouch for it; none of the file can
    // be trusted, and the journal was reset to vouch for nothing.
    Status finish();

    // Whether the checkpoint thread runs (for tests).
    bool checkpointing();

private:
    ResumeJournal(UniqueFd fd, uint64_t start, Checkpoints c);
    bool write_locked();
    void start_checkpoints_locked();
    void run_checkpoints(std::stop_token stop);
    bool checkpoint(std::unique_lock<std::mutex> &lock);

    UniqueFd fd_;
    const Checkpoints checkpoints_;
    std::mutex mutex_;
    std::condition_variable_any wake_;
    uint64_t written_ = 0;
    uint64_t durable_ = 0;
    std::optional<Error> sync_failed_;
    std::atomic<bool> *stop_flag_ = nullptr;
    const std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
    bool checkpoints_started_ = false;  // or tried to: a thread refused is not asked again
    std::jthread thread_;  // last: joined before the members it uses go
};

// Ties a transfer's stop flag (TransferProgress::abort) to a journal's
// checkpoints for as long as the transfer runs; the flag may go away first.
// A null journal (nothing journaled) ties nothing.
class StopOnFailedCheckpoint {
public:
    StopOnFailedCheckpoint(ResumeJournal *journal, std::atomic<bool> &flag) : journal_(journal) {
        if (journal_) journal_->stop_transfer_on_failure(&flag);
    }
    ~StopOnFailedCheckpoint() {
        if (journal_) journal_->stop_transfer_on_failure(nullptr);
    }
    StopOnFailedCheckpoint(const StopOnFailedCheckpoint &) = delete;
    StopOnFailedCheckpoint &operator=(const StopOnFailedCheckpoint &) = delete;

private:
    ResumeJournal *journal_;
};

// The prefix to resume from, recorded at path: the written prefix if the
// journal was written in this boot, else the durable one. nullopt when there
// is no journal; one that cannot be read as a journal counts as a prefix of
// 0: start over.
std::optional<uint64_t> read_resume_journal(const std::string &path);
uint64_t read_resume_journal(int fd);

}  // namespace rftp::middleware
