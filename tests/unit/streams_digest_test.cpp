// The digest across parallel streams: blocks given in any order by several
// streams give the file's SHA-256; a buffer comes back once hashed, or at
// once (copied) when its stream needs it; past the copy budget, or when a
// stream fails, the digest gives up and every buffer comes back.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "middleware/integrity/sha256.h"
#include "middleware/tcp/streams_digest.h"

using namespace rftp::middleware;

namespace {

constexpr uint32_t kBlock = 1000;

std::vector<uint8_t> file_of(std::size_t n) {
    std::vector<uint8_t> file(n);
    std::mt19937 rng(7);
    for (auto &b : file) b = static_cast<uint8_t>(rng());
    return file;
}

std::string whole(const std::vector<uint8_t> &data) {
    Sha256 s;
    s.update(data.data(), data.size());
    return s.hex();
}

uint32_t length_at(const std::vector<uint8_t> &file, uint64_t offset) {
    return static_cast<uint32_t>(std::min<uint64_t>(kBlock, file.size() - offset));
}

TEST(StreamsDigest, BlocksFromSeveralStreamsInAnyOrderGiveTheFilesDigest) {
    const auto file = file_of(10 * kBlock + 7);
    std::vector<uint64_t> offsets;
    for (uint64_t at = 0; at < file.size(); at += kBlock) offsets.push_back(at);
    std::shuffle(offsets.begin(), offsets.end(), std::mt19937(3));
    StreamsDigest d(3, 0);
    for (std::size_t i = 0; i < offsets.size(); ++i)
        d.give(i % 3, static_cast<uint32_t>(i), file.data() + offsets[i], offsets[i], length_at(file, offsets[i]));
    // Every buffer is back, to the stream that gave it.
    std::vector<uint32_t> back;
    for (std::size_t s = 0; s < 3; ++s)
        for (uint32_t slot : d.take_back(s)) {
            EXPECT_EQ(slot % 3, s);
            back.push_back(slot);
        }
    EXPECT_EQ(back.size(), offsets.size());
    EXPECT_EQ(d.finish(file.size()), whole(file));
}

TEST(StreamsDigest, ABlockAheadKeepsItsBufferUntilItsTurn) {
    const auto file = file_of(3 * kBlock);
    StreamsDigest d(2, 0);
    d.give(1, 7, file.data() + kBlock, kBlock, kBlock);
    EXPECT_TRUE(d.take_back(1).empty());  // still needed: byte 0 is not in yet
    d.give(0, 4, file.data(), 0, kBlock);
    EXPECT_EQ(d.take_back(0), std::vector<uint32_t>{4});
    EXPECT_EQ(d.take_back(1), std::vector<uint32_t>{7});  // hashed by stream 0's give
    d.give(1, 7, file.data() + kBlock, kBlock, kBlock);   // sent again: hashed already
    EXPECT_EQ(d.take_back(1), std::vector<uint32_t>{7});
    d.give(0, 4, file.data() + 2 * kBlock, 2 * kBlock, kBlock);
    EXPECT_EQ(d.finish(file.size()), whole(file));
}

TEST(StreamsDigest, AStreamTakesABufferBackAtOnceByACopy) {
    auto file = file_of(2 * kBlock);
    std::vector<uint8_t> buffer(file.begin() + kBlock, file.end());
    StreamsDigest d(2, kBlock);
    d.give(1, 5, buffer.data(), kBlock, kBlock);
    EXPECT_EQ(d.reclaim(1), std::vector<uint32_t>{5});
    std::fill(buffer.begin(), buffer.end(), 0);  // the stream reuses it
    d.give(0, 2, file.data(), 0, kBlock);
    EXPECT_EQ(d.finish(file.size()), whole(file));  // the copy was hashed, not the reused buffer
}

TEST(StreamsDigest, PastItsCopyBudgetTheDigestGivesUpAndReturnsEveryBuffer) {
    const auto file = file_of(4 * kBlock);
    StreamsDigest d(2, kBlock);
    d.give(0, 1, file.data() + kBlock, kBlock, kBlock);
    d.give(1, 2, file.data() + 2 * kBlock, 2 * kBlock, kBlock);
    d.give(1, 3, file.data() + 3 * kBlock, 3 * kBlock, kBlock);
    auto back = d.reclaim(1, false);  // one copy fits the budget,
    for (uint32_t slot : d.reclaim(1, false)) back.push_back(slot);  // the second does not
    std::sort(back.begin(), back.end());
    EXPECT_EQ(back, (std::vector<uint32_t>{2, 3}));
    EXPECT_EQ(d.take_back(0), std::vector<uint32_t>{1});
    d.give(0, 4, file.data(), 0, kBlock);
    EXPECT_EQ(d.take_back(0), std::vector<uint32_t>{4});  // given up: back at once
    EXPECT_EQ(d.finish(file.size()), std::nullopt);
}

TEST(StreamsDigest, AFailedStreamGivesTheDigestUp) {
    const auto file = file_of(2 * kBlock);
    StreamsDigest d(2, 1u << 20);
    std::atomic<bool> stopped{false};
    d.give(1, 9, file.data() + kBlock, kBlock, kBlock);
    EXPECT_EQ(d.finish_stream(1, true, stopped), std::vector<uint32_t>{9});
    EXPECT_EQ(d.finish(file.size()), std::nullopt);
}

TEST(StreamsDigest, AStreamThatIsDoneWaitsForTheOthersToCompleteThePrefix) {
    const auto file = file_of(2 * kBlock);
    StreamsDigest d(2, 0);
    std::atomic<bool> stopped{false};
    d.give(1, 9, file.data() + kBlock, kBlock, kBlock);
    std::vector<uint32_t> back;
    std::thread done([&] { back = d.finish_stream(1, false, stopped); });
    d.give(0, 3, file.data(), 0, kBlock);
    done.join();
    EXPECT_EQ(back, std::vector<uint32_t>{9});
    EXPECT_EQ(d.finish_stream(0, false, stopped), std::vector<uint32_t>{3});
    EXPECT_EQ(d.finish(file.size()), whole(file));
}

TEST(StreamsDigest, TheLastStreamDoneGivesUpWhatCanNeverComplete) {
    const auto file = file_of(2 * kBlock);
    StreamsDigest d(2, 1u << 20);
    std::atomic<bool> stopped{false};
    EXPECT_TRUE(d.finish_stream(0, false, stopped).empty());
    d.give(1, 9, file.data() + kBlock, kBlock, kBlock);  // byte 0 never comes
    EXPECT_EQ(d.finish_stream(1, false, stopped), std::vector<uint32_t>{9});
    EXPECT_EQ(d.finish(file.size()), std::nullopt);
}

}  // namespace
