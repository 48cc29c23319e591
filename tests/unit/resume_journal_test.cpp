#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "middleware/resume_journal.h"

using rftp::middleware::read_resume_journal;
using rftp::middleware::ResumeJournal;

TEST(ResumeJournal, RecordsOnlyGrowthAndReadsBack) {
    std::string path = "/tmp/rftp-journal-" + std::to_string(::getpid());
    EXPECT_FALSE(read_resume_journal(path).has_value());
    {
        auto j = ResumeJournal::create(path, 1000);
        ASSERT_TRUE(j);
        EXPECT_EQ(read_resume_journal(path), 1000u);
        j->record(123456789012ull);
        j->record(5);  // never goes back
        EXPECT_EQ(read_resume_journal(path), 123456789012ull);
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&j, t] {
                for (uint64_t v = 0; v < 1000; ++v) j->record(200000000000ull + v * 4 + t);
            });
        for (auto &t : threads) t.join();
        EXPECT_EQ(read_resume_journal(path), 200000000000ull + 999 * 4 + 3);
    }
    std::ofstream(path) << "garbage";
    EXPECT_EQ(read_resume_journal(path), 0u);  // unreadable: start over
    ::unlink(path.c_str());
}
