// Rings kept between transfers (middleware/disk/ring_cache.h): a disk
// engine with plain buffers gives its ring back when it ends, the next one
// (on another thread, as the next file's stream is) takes it and moves the
// right bytes through it, and its waits still end when woken, although the
// thread that last waited on that ring has ended.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/disk/ring_cache.h"

using namespace rftp;
using namespace rftp::middleware::disk;

namespace {

constexpr uint32_t kCachedBlock = 64 << 10;

struct Buffer {
    std::unique_ptr<uint8_t, decltype(&std::free)> mem{static_cast<uint8_t *>(std::aligned_alloc(4096, kCachedBlock)),
                                                        &std::free};
    std::vector<iovec> iovecs() const { return {{mem.get(), kCachedBlock}}; }
};

uint8_t pattern(uint64_t at) { return static_cast<uint8_t>((at * 2654435761u) >> 13); }

// Writes block number index of the pattern through an engine that takes its
// ring from rings and gives it back at the end.
void write_block(RingCache &rings, DiskFile &file, uint64_t index) {
    Buffer buffer;
    for (uint32_t b = 0; b < kCachedBlock; ++b) buffer.mem.get()[b] = pattern(index * kCachedBlock + b);
    auto io = BlockIo::create(buffer.iovecs(), 1, "test", BlockIo::Backend::io_uring, BlockIo::Buffers::plain, &rings);
    ASSERT_TRUE(io) << io.error().message;
    ASSERT_TRUE((*io)->uses_io_uring());
    (*io)->start({IoDirection::write, &file, 0, index * kCachedBlock, kCachedBlock});
    auto done = (*io)->wait();  // arms the wake poll too: the ring must still go back empty
    ASSERT_EQ(done.size(), 1u);
    ASSERT_TRUE(done[0].status) << done[0].status.error().message;
}

class RingCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = "/var/tmp/rftp-ring-cache-" + std::to_string(::getpid());
        std::filesystem::create_directories(dir_);
        path_ = dir_ + "/f";
        fd_ = UniqueFd(::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ASSERT_TRUE(fd_);
        file_ = DiskFile::open(fd_.get(), true, true);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    // The first file's block 0, written on a thread that then ends, as a
    // stream's does: its ring is the one kept.
    void write_first_file_on_its_own_thread() {
        std::thread first([&] { write_block(rings_, *file_, 0); });
        first.join();
    }

    RingCache rings_{4};
    std::string dir_, path_;
    UniqueFd fd_;
    std::unique_ptr<DiskFile> file_;
};

TEST_F(RingCacheTest, TheNextEngineTakesTheRingTheLastGaveBack) {
    RingCache &rings = rings_;
    write_first_file_on_its_own_thread();
    EXPECT_EQ(rings.kept(), 1u);
    {
        Buffer buffer;
        auto io = BlockIo::create(buffer.iovecs(), 1, "test", BlockIo::Backend::io_uring, BlockIo::Buffers::plain,
                                  &rings);
        ASSERT_TRUE(io);
        EXPECT_EQ(rings.kept(), 0u) << "a new ring was set up although one was kept";
    }
    EXPECT_EQ(rings.kept(), 1u);
    write_block(rings, *file_, 1);
    EXPECT_EQ(rings.kept(), 1u);

    std::vector<uint8_t> back(2 * kCachedBlock);
    ASSERT_EQ(::pread(fd_.get(), back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    for (uint32_t b = 0; b < back.size(); ++b) ASSERT_EQ(back[b], pattern(b)) << "byte " << b;
}

TEST_F(RingCacheTest, AWaitOnAKeptRingEndsWhenWokenAfterItsLastThreadEnded) {
    RingCache &rings = rings_;
    write_first_file_on_its_own_thread();
    ASSERT_EQ(rings.kept(), 1u);
    Buffer buffer;
    auto io = BlockIo::create(buffer.iovecs(), 1, "test", BlockIo::Backend::io_uring, BlockIo::Buffers::plain, &rings);
    ASSERT_TRUE(io);
    BlockIo *engine = io->get();
    auto waited = std::async(std::launch::async, [engine] { return engine->wait().size(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine->wake();
    if (waited.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        ADD_FAILURE() << "wake() did not end the wait";
        std::_Exit(1);  // the waiting thread cannot be ended otherwise
    }
    EXPECT_EQ(waited.get(), 0u);
}

TEST(RingCache, TakesTheSmallestRingThatIsLargeEnoughAndKeepsAtMostItsLimit) {
    RingCache rings(2);
    for (unsigned entries : {64u, 8u, 16u}) {
        auto ring = IoRing::create(entries);
        ASSERT_TRUE(ring) << ring.error().message;
        rings.give({std::move(*ring), UniqueFd(::dup(0))});
    }
    EXPECT_EQ(rings.kept(), 2u);  // the third was closed
    EXPECT_FALSE(rings.take(1024).has_value());
    auto small = rings.take(5);
    ASSERT_TRUE(small.has_value());
    EXPECT_EQ(small->ring.entries(), 8u);
    auto next = rings.take(5);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->ring.entries(), 64u);
    EXPECT_FALSE(rings.take(1).has_value());
}

TEST(RingCache, ARingWithRegisteredBuffersIsNotKept) {
    RingCache rings(2);
    Buffer buffer;
    auto ring = IoRing::create(4);
    ASSERT_TRUE(ring);
    ASSERT_EQ(ring->register_buffers(buffer.iovecs()), 0);
    rings.give({std::move(*ring), UniqueFd(::dup(0))});
    EXPECT_EQ(rings.kept(), 0u);
}

}  // namespace
