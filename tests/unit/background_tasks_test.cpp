// The daemon's worker threads: work off the loop, completion on it, workers
// kept for the next task, no task ever waiting behind another, and the
// loop told when every task has finished.
#include "daemon/server/background_tasks.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <thread>

#include "tests/unit/uv_test_loop.h"

using namespace std::chrono_literals;
using rftp::daemon::BackgroundTasks;
using rftp::daemon::LoopBridge;

using Loop = rftp::daemon::testing::UvTestLoop;

TEST(BackgroundTasks, WorkRunsOffTheLoopAndDoneOnIt) {
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    const auto loop_thread = std::this_thread::get_id();
    std::thread::id worked_on, done_on;
    bool done = false;
    tasks.run("test", [&] { worked_on = std::this_thread::get_id(); },
              [&] {
                  done_on = std::this_thread::get_id();
                  done = true;
              },
              [] { ADD_FAILURE() << "refused"; });
    ASSERT_TRUE(l.until([&] { return done; }));
    EXPECT_NE(worked_on, loop_thread);
    EXPECT_EQ(done_on, loop_thread);
}

TEST(BackgroundTasks, AWorkerTakesTheNextTaskInsteadOfANewThread) {
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    std::thread::id first, second;
    int done = 0;
    tasks.run("test", [&] { first = std::this_thread::get_id(); }, [&] { ++done; }, [] {});
    // The worker waits for more once it is back from posting done.
    ASSERT_TRUE(l.until([&] { return done == 1 && tasks.running() == 0; }));
    tasks.run("test", [&] { second = std::this_thread::get_id(); }, [&] { ++done; }, [] {});
    ASSERT_TRUE(l.until([&] { return done == 2; }));
    EXPECT_EQ(first, second);
    EXPECT_EQ(tasks.workers(), 1u);
}

TEST(BackgroundTasks, ATaskAskedForWhenTheLastOneIsDoneFindsItsWorker) {
    // As a session does: its login's completion lets the next command in,
    // which asks for a transfer. The worker that ran the login is free by then.
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    std::thread::id first, second;
    bool done = false;
    tasks.run("test", [&] { first = std::this_thread::get_id(); },
              [&] {
                  EXPECT_EQ(tasks.running(), 0u);
                  tasks.run("test", [&] { second = std::this_thread::get_id(); }, [&] { done = true; },
                            [] { ADD_FAILURE() << "refused"; });
              },
              [] { ADD_FAILURE() << "refused"; });
    ASSERT_TRUE(l.until([&] { return done; }));
    EXPECT_EQ(first, second);
    EXPECT_EQ(tasks.workers(), 1u);
}

TEST(BackgroundTasks, WhenAllDoneWaitsForTheLastCompletion) {
    // As rftpd stops: the loop lives until a cut transfer has logged its line.
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    bool at_once = false;
    tasks.when_all_done([&] { at_once = true; });
    EXPECT_TRUE(at_once);  // nothing under way

    std::mutex m;
    std::condition_variable cv;
    bool release = false, done = false, all_done = false;
    tasks.run("test",
        [&] {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return release; });
        },
        [&] {
            EXPECT_FALSE(all_done);
            done = true;
        },
        [] { ADD_FAILURE() << "refused"; });
    tasks.when_all_done([&] {
        EXPECT_TRUE(done);
        all_done = true;
    });
    EXPECT_FALSE(l.until([&] { return all_done; }, 50ms));
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    ASSERT_TRUE(l.until([&] { return all_done; }));
}

TEST(BackgroundTasks, AWorkThatThrowsIsRefusedAndTheWorkerServesOn) {
    // Out of memory inside one command: that session is told, the daemon
    // (here, the test) lives, and the worker takes the next task.
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    const auto loop_thread = std::this_thread::get_id();
    std::thread::id first, second, refused_on;
    bool refused = false, all_done = false, next_done = false;
    tasks.run("test",
        [&] {
            first = std::this_thread::get_id();
            throw std::bad_alloc();
        },
        [] { ADD_FAILURE() << "done ran for a work that threw"; },
        [&] {
            refused_on = std::this_thread::get_id();
            refused = true;
        });
    tasks.when_all_done([&] { all_done = true; });
    ASSERT_TRUE(l.until([&] { return refused && all_done; }));
    EXPECT_EQ(refused_on, loop_thread);
    ASSERT_TRUE(l.until([&] { return tasks.running() == 0; }));
    tasks.run("test", [&] { second = std::this_thread::get_id(); }, [&] { next_done = true; },
              [] { ADD_FAILURE() << "refused"; });
    ASSERT_TRUE(l.until([&] { return next_done; }));
    EXPECT_EQ(first, second);
}

TEST(BackgroundTasks, ATaskNeverWaitsBehindAnother) {
    // Two transfers at once: each waits until the other has started, which
    // only happens if they run side by side.
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    std::mutex m;
    std::condition_variable cv;
    int started = 0, done = 0;
    std::atomic<int> met{0};
    auto meet = [&] {
        std::unique_lock lock(m);
        ++started;
        cv.notify_all();
        if (cv.wait_for(lock, 5s, [&] { return started == 2; })) ++met;
    };
    for (int i = 0; i < 2; ++i) tasks.run("test", meet, [&] { ++done; }, [] { ADD_FAILURE() << "refused"; });
    ASSERT_TRUE(l.until([&] { return done == 2; }));
    EXPECT_EQ(met.load(), 2);
    EXPECT_EQ(tasks.workers(), 2u);
}

TEST(BackgroundTasks, WhatTheWorkHeldIsGoneBeforeDoneRuns) {
    // An RDMA channel or an open file captured by the work is released on
    // the worker before the completion runs on the loop.
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    auto held = std::make_shared<int>(1);
    std::weak_ptr<int> watch = held;
    bool released_first = false, done = false;
    tasks.run("test", [held = std::move(held)] {}, [&] {
        released_first = watch.expired();
        done = true;
    }, [] {});
    ASSERT_TRUE(l.until([&] { return done; }));
    EXPECT_TRUE(released_first);
}

TEST(BackgroundTasks, AnIdleWorkerEnds) {
    Loop l;
    BackgroundTasks tasks(*l.bridge, 20ms);
    bool done = false;
    tasks.run("test", [] {}, [&] { done = true; }, [] {});
    ASSERT_TRUE(l.until([&] { return done; }));
    EXPECT_TRUE(l.until([&] { return tasks.workers() == 0; }));
}

TEST(BackgroundTasks, JoinAllWaitsForTheTaskUnderWayThenRefusesMore) {
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    std::atomic<bool> ran{false};
    tasks.run("test",
        [&] {
            std::this_thread::sleep_for(20ms);
            ran = true;
        },
        [] {}, [] {});
    tasks.join_all();
    EXPECT_TRUE(ran.load());
    bool refused = false;
    tasks.run("test", [] { ADD_FAILURE() << "ran after join_all"; }, [] {}, [&] { refused = true; });
    EXPECT_TRUE(refused);
}

TEST(BackgroundTasks, SaysWhichTasksHaveNotFinished) {
    // What a stop held up by slow work names in the log (event=stop_waiting).
    Loop l;
    BackgroundTasks tasks(*l.bridge);
    std::atomic<bool> release{false};
    bool quick_done = false, slow_done = false;
    tasks.run("session=1 command=DELE", [&] { while (!release) std::this_thread::sleep_for(1ms); },
              [&] { slow_done = true; }, [] {});
    tasks.run("session=2 command=SIZE", [] {}, [&] { quick_done = true; }, [] {});
    EXPECT_EQ(tasks.unfinished(), (std::vector<std::string>{"session=1 command=DELE", "session=2 command=SIZE"}));
    ASSERT_TRUE(l.until([&] { return quick_done; }));
    EXPECT_EQ(tasks.unfinished(), std::vector<std::string>{"session=1 command=DELE"});
    release = true;
    ASSERT_TRUE(l.until([&] { return slow_done; }));
    EXPECT_TRUE(tasks.unfinished().empty());
}
