#include "middleware/resume_journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <system_error>
#include <vector>

#include "common/decimal.h"
#include "common/log.h"
#include "middleware/boot_id.h"
#include "middleware/disk/plain_file.h"
#include "middleware/test_switches.h"

namespace rftp::middleware {

std::chrono::milliseconds default_checkpoint_interval() {
    static const std::chrono::milliseconds every = [] {
        if (const char *v = test_switch("RFTP_TEST_CHECKPOINT_MS")) {
            long ms = std::strtol(v, nullptr, 10);
            if (ms > 0) return std::chrono::milliseconds(ms);
        }
        return std::chrono::milliseconds(std::chrono::seconds(5));
    }();
    return every;
}

ResumeJournal::ResumeJournal(UniqueFd fd, uint64_t start, Checkpoints c)
    : fd_(std::move(fd)), checkpoints_(c), written_(start) {}

Result<std::unique_ptr<ResumeJournal>> ResumeJournal::create(const std::string &path, uint64_t start, Checkpoints c) {
    constexpr int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
    UniqueFd fd = open_plain_file(path, flags);
    // Someone's symlink or FIFO at the name (a shared directory) is not
    // written through: it goes, and the journal is made in its place.
    if (!fd && (errno == ELOOP || errno == ENXIO || errno == EINVAL) && ::unlink(path.c_str()) == 0)
        fd = open_plain_file(path, flags);
    if (!fd) return fail_errno("create resume journal " + path);
    return create(std::move(fd), start, c);
}

Result<std::unique_ptr<ResumeJournal>> ResumeJournal::create(UniqueFd fd, uint64_t start, Checkpoints c) {
    std::unique_ptr<ResumeJournal> j(new ResumeJournal(std::move(fd), start, c));
    {
        std::lock_guard lock(j->mutex_);
        if (!j->write_locked()) return fail_errno("write resume journal");
    }
    if (c.data_fd < 0 || start == 0) return j;
    std::lock_guard lock(j->mutex_);
    j->start_checkpoints_locked();
    return j;
}

void ResumeJournal::start_checkpoints_locked() {
    checkpoints_started_ = true;
    try {
        thread_ = std::jthread([this](std::stop_token stop) { run_checkpoints(stop); });
    } catch (const std::system_error &e) {
        log::warning("event=resume_journal checkpoints=off reason=" + log::quote(e.what()) +
                  " (a power loss will restart this transfer from the beginning)");
    }
}

bool ResumeJournal::write_locked() {
    // Fixed-width, so a shorter number never leaves digits of a longer one
    // behind; one small pwrite is not torn by a process crash.
    char text[128];
    char *end = text;
    for (uint64_t value : {written_, durable_}) {
        char *start = end;
        end = std::to_chars(start, start + 20, value).ptr;
        while (end < start + 20) *end++ = ' ';
        *end++ = ' ';
    }
    const std::string &boot = boot_id();
    end = std::copy_n(boot.data(), std::min<std::size_t>(boot.size(), 64), end);
    *end++ = '\n';
    return ::pwrite(fd_.get(), text, static_cast<std::size_t>(end - text), 0) == end - text;
}

void ResumeJournal::record(uint64_t prefix) {
    std::lock_guard lock(mutex_);
    if (prefix <= written_ || sync_failed_) return;
    written_ = prefix;
    (void)write_locked();  // a line not written leaves the journal behind, never ahead
    if (!checkpoints_started_ && checkpoints_.data_fd >= 0 &&
        std::chrono::steady_clock::now() - created_ >= checkpoints_.every)
        start_checkpoints_locked();
}

void ResumeJournal::run_checkpoints(std::stop_token stop) {
    std::unique_lock lock(mutex_);
    // A resumed start is made durable at once: it may be only in the page
    // cache (the last process died, not the machine). A thread started by
    // record() comes an interval late already: it syncs at once too.
    bool wait = written_ == 0;
    while (true) {
        if (wait) wake_.wait_for(lock, stop, checkpoints_.every, [] { return false; });
        if (stop.stop_requested()) return;
        wait = true;
        if (written_ > durable_ && !checkpoint(lock)) return;
    }
}

// Syncs the file, then records as durable what was complete before the sync.
// The journal itself is synced once, so that it exists after a power loss;
// later lines need no sync: an older durable prefix is still a true one.
// The first sync of the file is a whole fsync: fdatasync may leave out
// metadata that reading the bytes does not need, and the partial's extended
// attribute (the upload's SRCE record, written before any block) is such
// metadata. Without it a resume after a power loss cannot tell where the
// vouched-for bytes came from, and sends the file again whole.
bool ResumeJournal::checkpoint(std::unique_lock<std::mutex> &lock) {
    const uint64_t target = written_;
    const bool first = durable_ == 0;
    lock.unlock();
    int synced = first ? ::fsync(checkpoints_.data_fd) : ::fdatasync(checkpoints_.data_fd);
    int err = errno;
    lock.lock();
    if (synced == 0) {
        durable_ = target;
        (void)write_locked();
        if (!first) return true;
        lock.unlock();
        synced = ::fsync(fd_.get());
        err = errno;
        lock.lock();
        if (synced == 0) return true;
    }
    sync_failed_ = Error::from_errno("sync at a checkpoint", err);
    written_ = durable_ = 0;
    (void)write_locked();
    if (stop_flag_) stop_flag_->store(true);
    return false;
}

void ResumeJournal::stop_transfer_on_failure(std::atomic<bool> *flag) {
    std::lock_guard lock(mutex_);
    stop_flag_ = flag;
    if (stop_flag_ && sync_failed_) stop_flag_->store(true);
}

Status ResumeJournal::finish() {
    std::jthread checkpoints;
    {
        // record() may start the thread: taken under the lock, and none after.
        std::lock_guard lock(mutex_);
        checkpoints_started_ = true;
        checkpoints = std::move(thread_);
    }
    if (checkpoints.joinable()) {
        checkpoints.request_stop();
        checkpoints.join();
    }
    std::lock_guard lock(mutex_);
    if (sync_failed_) return fail(*sync_failed_);
    return {};
}

bool ResumeJournal::checkpointing() {
    std::lock_guard lock(mutex_);
    return thread_.joinable();
}

std::optional<uint64_t> read_resume_journal(const std::string &path) {
    // O_NONBLOCK: a FIFO at the name must not hang the open waiting for a writer.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) return std::nullopt;
    struct stat st {};
    // Not a journal of ours, yet something is there: vouches for nothing.
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return read_resume_journal(fd.get());
}

uint64_t read_resume_journal(int fd) {
    char text[160] = {};
    ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    if (n <= 0) return 0;
    std::string_view line(text, static_cast<std::size_t>(n));
    line = line.substr(0, line.find('\n'));
    std::vector<std::string_view> tokens;
    for (std::size_t at = 0; at < line.size();) {
        std::size_t begin = line.find_first_not_of(' ', at);
        if (begin == std::string_view::npos) break;
        std::size_t end = std::min(line.find(' ', begin), line.size());
        tokens.push_back(line.substr(begin, end - begin));
        at = end;
    }
    if (tokens.empty() || tokens.size() > 3) return 0;
    auto written = parse_decimal(tokens[0]);
    if (!written) return 0;
    if (tokens.size() == 1) return *written;  // the one-number journal of earlier versions
    auto durable = parse_decimal(tokens[1]);
    if (!durable) return 0;
    const bool same_boot = tokens.size() == 3 && !boot_id().empty() && tokens[2] == boot_id();
    return same_boot ? *written : std::min(*durable, *written);
}

}  // namespace rftp::middleware
