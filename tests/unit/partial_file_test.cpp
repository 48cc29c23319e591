// The life of a file on its way in (middleware/disk/partial_file.h): what
// each step leaves behind, and what a failed sync takes away.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "middleware/disk/partial_file.h"

using rftp::UniqueFd;
using rftp::middleware::PartialFile;
using rftp::middleware::read_resume_journal;
using rftp::middleware::ReservedSize;
using rftp::middleware::ResumeJournal;

namespace {

class PartialFileTest : public ::testing::Test {
protected:
    std::string dir = "/tmp/rftp-partial-file-" + std::to_string(::getpid());
    std::string partial_path = dir + "/a.rftp-part";
    std::string journal_path = dir + "/a.rftp-resume";
    UniqueFd fd;
    std::vector<bool> removals;  // each call: whether the partial file went too

    void SetUp() override {
        ::mkdir(dir.c_str(), 0700);
        fd.reset(::open(partial_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ASSERT_TRUE(fd);
    }
    void TearDown() override {
        ::unlink(partial_path.c_str());
        ::unlink(journal_path.c_str());
        ::rmdir(dir.c_str());
    }
    PartialFile partial_file(int file_fd) {
        return PartialFile(file_fd, [this](bool partial_too) {
            removals.push_back(partial_too);
            if (partial_too) ::unlink(partial_path.c_str());
            ::unlink(journal_path.c_str());
        });
    }
    void keep_journal(PartialFile &p, uint64_t start) {
        auto j = ResumeJournal::create(journal_path, start, {.data_fd = fd.get()});
        ASSERT_TRUE(j) << j.error().message;
        p.keep_journal(std::move(*j));
    }
    static bool exists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }
};

}  // namespace

TEST_F(PartialFileTest, TheJournalFollowsTheCompletePrefixUntilTheFileIsDurable) {
    PartialFile p = partial_file(fd.get());
    keep_journal(p, 4096);
    auto record = p.prefix_recorder();
    record(65536);
    record(8192);  // a shorter prefix never moves the journal back
    EXPECT_EQ(read_resume_journal(journal_path), 65536u);
    ASSERT_TRUE(p.make_durable(PartialFile::Sync::data));
    EXPECT_FALSE(exists(journal_path));
    EXPECT_TRUE(exists(partial_path));
    EXPECT_EQ(removals, std::vector<bool>{false});
    EXPECT_EQ(p.journal(), nullptr);
}

TEST_F(PartialFileTest, ADiscardTakesThePartialFileAndItsJournal) {
    PartialFile p = partial_file(fd.get());
    keep_journal(p, 0);
    ASSERT_TRUE(p.stop_checkpoints());
    p.discard();
    EXPECT_FALSE(exists(journal_path));
    EXPECT_FALSE(exists(partial_path));
    EXPECT_EQ(removals, std::vector<bool>{true});
}

TEST_F(PartialFileTest, AFailedFinalSyncKeepsTheJournalForTheCallerToDiscard) {
    // A descriptor that cannot be synced stands for a disk that lost a write.
    PartialFile p = partial_file(-1);
    keep_journal(p, 0);
    for (auto sync : {PartialFile::Sync::data, PartialFile::Sync::data_and_attributes}) {
        auto durable = p.make_durable(sync);
        ASSERT_FALSE(durable);
        EXPECT_EQ(durable.error().code, -EBADF);
    }
    EXPECT_TRUE(exists(journal_path));
    EXPECT_TRUE(removals.empty());
    // With syncs turned off there is nothing to fail.
    EXPECT_TRUE(p.make_durable(PartialFile::Sync::none));
    EXPECT_EQ(removals, std::vector<bool>{false});
}

TEST_F(PartialFileTest, ReservesOnlyWhatLiesAhead) {
    PartialFile p = partial_file(fd.get());
    // (What a reservation does to the file is preallocate()'s; tmpfs reserves nothing.)
    ASSERT_TRUE(p.reserve(0, 1 << 20, ReservedSize::whole));
    EXPECT_TRUE(p.reserve(1 << 20, 1 << 20, ReservedSize::whole));  // nothing left: nothing to do
    EXPECT_TRUE(p.reserve(2 << 20, 1 << 20, ReservedSize::hidden));
}

TEST_F(PartialFileTest, WithoutNamesNothingIsRemoved) {
    PartialFile p(fd.get(), {});
    p.discard();
    p.forget_journal();
    EXPECT_TRUE(exists(partial_path));
}
