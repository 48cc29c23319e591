// The command rftp prints for resuming an interrupted transfer: pasted into
// a shell, it must do what the first run did, for any file name.
#include "client/commands/resume_command.h"

#include <gtest/gtest.h>

using rftp::client::Options;
using rftp::client::resume_command;
using rftp::client::Transport;

TEST(ResumeCommand, ANameBeginningWithADashComesAfterTheEndOfOptions) {
    Options o;
    EXPECT_EQ(resume_command("get", o, {"rftp://h/x", "-x.dat"}), "rftp get -c -- 'rftp://h/x' '-x.dat'");
}

TEST(ResumeCommand, QuotesSurviveAShell) {
    Options o;
    EXPECT_EQ(resume_command("put", o, {"it's here", "rftp://h/d/"}), "rftp put -c -- 'it'\\''s here' 'rftp://h/d/'");
}

TEST(ResumeCommand, TheRunsChoicesAreCarriedOver) {
    Options o;
    o.command = rftp::client::Command::get;
    o.recursive = true;
    o.verify = true;
    o.parallel = 8;
    o.parallel_given = true;
    o.concurrency = 2;
    o.continue_on_error = true;
    o.transport = Transport::tcp;
    o.block_size = 4u << 20;
    o.block_size_given = true;
    o.block_checksums = false;
    o.timeout_seconds = 300;
    o.rdma_pool = 16u << 20;  // a small RLIMIT_MEMLOCK needed it
    o.iodepth = 4;
    EXPECT_EQ(resume_command("get", o, {"rftp://h/d", "out"}),
              "rftp get -c -r --verify -P 8 -j 2 --continue-on-error --transport tcp --block-size 4M "
              "--no-block-checksums --rdma-pool 16M --iodepth 4 --timeout 300 -- 'rftp://h/d' 'out'");
}

TEST(ResumeCommand, AGivenOneStreamIsKept) {
    // Without -P the streams follow the path; -P 1 chose one.
    Options o;
    o.parallel_given = true;
    EXPECT_EQ(resume_command("get", o, {"rftp://h/a", "a"}), "rftp get -c -P 1 -- 'rftp://h/a' 'a'");
}

TEST(ResumeCommand, DefaultsAreLeftOut) {
    Options o;
    o.quiet = true;  // how a run reports is not carried
    o.json = true;
    EXPECT_EQ(resume_command("put", o, {"a", "rftp://h/a"}), "rftp put -c -- 'a' 'rftp://h/a'");
}
