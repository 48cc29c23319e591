#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "middleware/boot_id.h"
#include "common/unique_fd.h"
#include "middleware/resume_journal.h"

using rftp::middleware::boot_id;
using rftp::middleware::Checkpoints;
using rftp::middleware::read_resume_journal;
using rftp::UniqueFd;
using rftp::middleware::ResumeJournal;
using rftp::middleware::StopOnFailedCheckpoint;
using namespace std::chrono_literals;

namespace {

std::string temp_path(const std::string &name) { return "/tmp/rftp-" + name + "-" + std::to_string(::getpid()); }

std::vector<std::string> fields(const std::string &path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    for (std::string t; in >> t;) out.push_back(t);
    return out;
}

// What a reboot does to a journal: it now names a boot that is not this one.
void as_if_rebooted(const std::string &path) {
    auto f = fields(path);
    ASSERT_EQ(f.size(), 3u);
    std::ofstream(path) << f[0] << ' ' << f[1] << " 00000000-0000-0000-0000-000000000000\n";
}

// Waits (up to 10 s) for the journal's durable prefix to reach want.
bool durable_reaches(const std::string &path, const std::string &want) {
    for (int i = 0; i < 1000; ++i) {
        auto f = fields(path);
        if (f.size() == 3 && f[1] == want) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

}  // namespace

TEST(ResumeJournal, RecordsOnlyGrowthAndReadsBack) {
    if (boot_id().empty()) GTEST_SKIP() << "no boot id in /proc here";
    std::string path = temp_path("journal");
    EXPECT_FALSE(read_resume_journal(path).has_value());
    {
        auto j = ResumeJournal::create(path, 1000);
        ASSERT_TRUE(j);
        EXPECT_EQ(read_resume_journal(path), 1000u);
        (*j)->record(123456789012ull);
        (*j)->record(5);  // never goes back
        EXPECT_EQ(read_resume_journal(path), 123456789012ull);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&j, t] {
                for (uint64_t v = 0; v < 1000; ++v) (*j)->record(200000000000ull + v * 4 + t);
            });
        for (auto &t : threads) t.join();
        EXPECT_EQ(read_resume_journal(path), 200000000000ull + 999 * 4 + 3);
    }
    std::ofstream(path) << "garbage";
    EXPECT_EQ(read_resume_journal(path), 0u);  // unreadable: start over
    std::ofstream(path) << "12 x " << boot_id() << "\n";
    EXPECT_EQ(read_resume_journal(path), 0u);
    std::ofstream(path) << "1 2 3 4\n";
    EXPECT_EQ(read_resume_journal(path), 0u);
    ::unlink(path.c_str());
}

TEST(ResumeJournal, AJournalOfEarlierVersionsIsItsOneNumber) {
    std::string path = temp_path("journal-v1");
    std::ofstream(path) << "4194304             \n";
    EXPECT_EQ(read_resume_journal(path), 4194304u);
    ::unlink(path.c_str());
}

TEST(ResumeJournal, AfterARebootOnlyTheDurablePrefixCounts) {
    if (boot_id().empty()) GTEST_SKIP() << "no boot id in /proc here";
    std::string path = temp_path("journal-reboot");
    {
        auto j = ResumeJournal::create(path, 0);  // no checkpoints: never synced
        ASSERT_TRUE(j);
        (*j)->record(5000);
        ASSERT_TRUE((*j)->finish());
    }
    EXPECT_EQ(read_resume_journal(path), 5000u);  // only the process died
    as_if_rebooted(path);
    EXPECT_EQ(read_resume_journal(path), 0u);  // nothing of it was synced
    ::unlink(path.c_str());
}

TEST(ResumeJournal, ACheckpointSyncsTheFileThenVouchesForWhatWasWritten) {
    if (boot_id().empty()) GTEST_SKIP() << "no boot id in /proc here";
    std::string path = temp_path("journal-cp"), data_path = temp_path("journal-cp-data");
    std::ofstream(data_path) << std::string(8192, 'x');
    int data = ::open(data_path.c_str(), O_WRONLY);
    ASSERT_GE(data, 0);
    {
        auto j = ResumeJournal::create(path, 0, Checkpoints{data, 10ms});
        ASSERT_TRUE(j);
        std::this_thread::sleep_for(20ms);  // checkpoints begin with the first record an interval in
        (*j)->record(4096);
        EXPECT_TRUE(durable_reaches(path, "4096"));
        (*j)->record(8192);
        EXPECT_TRUE(durable_reaches(path, "8192"));
        EXPECT_TRUE((*j)->finish());
    }
    as_if_rebooted(path);
    EXPECT_EQ(read_resume_journal(path), 8192u);
    ::close(data);
    ::unlink(data_path.c_str());
    ::unlink(path.c_str());
}

TEST(ResumeJournal, AResumedStartIsMadeDurableAtOnce) {
    std::string path = temp_path("journal-start"), data_path = temp_path("journal-start-data");
    std::ofstream(data_path) << std::string(8192, 'x');
    int data = ::open(data_path.c_str(), O_WRONLY);
    ASSERT_GE(data, 0);
    {
        auto j = ResumeJournal::create(path, 8192, Checkpoints{data, std::chrono::hours(1)});
        ASSERT_TRUE(j);
        EXPECT_TRUE(durable_reaches(path, "8192"));  // long before the first interval
        EXPECT_TRUE((*j)->finish());
    }
    ::close(data);
    ::unlink(data_path.c_str());
    ::unlink(path.c_str());
}

TEST(ResumeJournal, ATransferShorterThanAnIntervalStartsNoCheckpointThread) {
    std::string path = temp_path("journal-short"), data_path = temp_path("journal-short-data");
    std::ofstream(data_path) << std::string(8192, 'x');
    UniqueFd data(::open(data_path.c_str(), O_WRONLY));
    ASSERT_TRUE(data);
    {
        auto j = ResumeJournal::create(path, 0, Checkpoints{data.get(), 500ms});
        ASSERT_TRUE(j);
        (*j)->record(4096);
        EXPECT_FALSE((*j)->checkpointing());  // a small file costs no thread
        std::this_thread::sleep_for(510ms);
        (*j)->record(8192);  // an interval in: checkpoints begin, at once
        EXPECT_TRUE((*j)->checkpointing());
        EXPECT_TRUE(durable_reaches(path, "8192"));
        EXPECT_TRUE((*j)->finish());
        (*j)->record(12288);  // after finish: no thread comes back
        EXPECT_FALSE((*j)->checkpointing());
    }
    ::unlink(data_path.c_str());
    ::unlink(path.c_str());
}

// A data fd whose every sync fails, as a disk that lost a write would make
// it: fdatasync on a pipe fails (EINVAL). Both ends close with it.
struct UnsyncableFd {
    int fds[2] = {-1, -1};
    UnsyncableFd() { EXPECT_EQ(::pipe(fds), 0); }
    ~UnsyncableFd() {
        ::close(fds[0]);
        ::close(fds[1]);
    }
    int get() const { return fds[1]; }
};

TEST(ResumeJournal, AFailedSyncStopsTheTransferTiedToIt) {
    std::string path = temp_path("journal-stop");
    UnsyncableFd data;
    {
        auto j = ResumeJournal::create(path, 0, Checkpoints{data.get(), 10ms});
        ASSERT_TRUE(j);
        std::atomic<bool> stop{false};
        {
            StopOnFailedCheckpoint tie(j->get(), stop);
            std::this_thread::sleep_for(20ms);
            (*j)->record(4096);
            for (int i = 0; i < 1000 && !stop.load(); ++i) std::this_thread::sleep_for(10ms);
            EXPECT_TRUE(stop.load());
        }
        // Tied after the failure (the next transfer on this journal): at once.
        std::atomic<bool> late{false};
        StopOnFailedCheckpoint tie(j->get(), late);
        EXPECT_TRUE(late.load());
        EXPECT_FALSE((*j)->finish());
    }
    ::unlink(path.c_str());
}

TEST(ResumeJournal, NoStopWhileCheckpointsSucceed) {
    std::string path = temp_path("journal-nostop");
    std::string data = temp_path("journal-nostop-data");
    UniqueFd fd(::open(data.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644));
    ASSERT_TRUE(fd);
    {
        auto j = ResumeJournal::create(path, 0, Checkpoints{fd.get(), 5ms});
        ASSERT_TRUE(j);
        std::atomic<bool> stop{false};
        StopOnFailedCheckpoint tie(j->get(), stop);
        for (uint64_t at = 1; at <= 10; ++at) {
            (*j)->record(at * 4096);
            std::this_thread::sleep_for(10ms);
        }
        EXPECT_FALSE(stop.load());
        EXPECT_TRUE((*j)->finish());
    }
    ::unlink(path.c_str());
    ::unlink(data.c_str());
}

TEST(ResumeJournal, AFailedSyncVouchesForNothingAndIsReported) {
    std::string path = temp_path("journal-eio");
    UnsyncableFd data;
    {
        auto j = ResumeJournal::create(path, 0, Checkpoints{data.get(), 10ms});
        ASSERT_TRUE(j);
        std::this_thread::sleep_for(20ms);
        (*j)->record(4096);
        // The failed checkpoint resets the journal; later records are ignored.
        for (int i = 0; i < 1000 && fields(path)[0] != "0"; ++i) std::this_thread::sleep_for(10ms);
        (*j)->record(8192);
        auto finished = (*j)->finish();
        ASSERT_FALSE(finished);
        EXPECT_NE(finished.error().message.find("sync at a checkpoint"), std::string::npos);
    }
    EXPECT_EQ(read_resume_journal(path), 0u);
    ::unlink(path.c_str());
}
