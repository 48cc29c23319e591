// The disk engine on real files: on the machine's own disk (ext4, where
// O_DIRECT works) and on tmpfs, through io_uring and through plain
// positioned calls. Sizes sit on every alignment boundary; blocks finish in
// any order and must still land at their offsets; the unaligned parts go
// buffered and the rest direct.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "middleware/disk/block_io.h"
#include "middleware/disk/disk_file.h"
#include "middleware/disk/preallocate.h"

using namespace rftp;
using namespace rftp::middleware::disk;

namespace {

constexpr uint32_t kBlock = 64 << 10;
constexpr std::size_t kStride = kBlock + 4096;  // as the channel's pool: a page after each block
constexpr unsigned kBlocks = 8;

struct Pool {
    std::unique_ptr<uint8_t, decltype(&std::free)> mem{static_cast<uint8_t *>(std::aligned_alloc(4096, kBlocks * kStride)),
                                                        &std::free};
    uint8_t *block(uint32_t i) const { return mem.get() + i * kStride; }
    std::vector<iovec> buffers() const {
        std::vector<iovec> v;
        for (uint32_t i = 0; i < kBlocks; ++i) v.push_back({block(i), kStride});
        return v;
    }
};

uint8_t pattern(uint64_t at) { return static_cast<uint8_t>((at * 2654435761u) >> 13); }

// A directory of this process's own, removed however the test leaves
// (an ASSERT or a skip returns early; ctest runs each test in a process).
class ScratchDir {
public:
    explicit ScratchDir(const std::string &where) : path_(where + "/rftp-disk-engine-" + std::to_string(::getpid())) {
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;
    operator const std::string &() const { return path_; }
    std::string operator+(const std::string &name) const { return path_ + name; }

private:
    std::string path_;
};

// Writes a file of size bytes through the engine, blocks in reverse order
// (as RDMA delivers them: any order), then reads it back through it.
void round_trip(const std::string &dir, uint64_t size, BlockIo::Backend backend, uint64_t start = 0) {
    SCOPED_TRACE("size " + std::to_string(size) + " start " + std::to_string(start) + " in " + dir +
                 (backend == BlockIo::Backend::io_uring ? " io_uring" : " pread/pwrite"));
    Pool pool;
    auto io = BlockIo::create(pool.buffers(), 4, "test", backend);
    ASSERT_TRUE(io) << io.error().message;
    std::string path = dir + "/f" + std::to_string(size) + "-" + std::to_string(start);
    UniqueFd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(out);
    auto wfile = DiskFile::open(out.get(), true, true);
    std::vector<BlockOp> ops;
    for (uint64_t at = start; at < size; at += kBlock)
        ops.push_back({IoDirection::write, wfile.get(), 0, at, static_cast<uint32_t>(std::min<uint64_t>(kBlock, size - at))});
    uint64_t expect_direct = 0;
    for (std::size_t i = 0; i < ops.size();) {
        // Fill as many pool blocks as there is depth, newest offsets first.
        std::size_t batch = std::min<std::size_t>(4, ops.size() - i);
        for (std::size_t k = 0; k < batch; ++k) {
            BlockOp &op = ops[ops.size() - 1 - i - k];
            op.block = static_cast<uint32_t>(k);
            for (uint32_t b = 0; b < op.length; ++b) pool.block(op.block)[b] = pattern(op.offset + b);
            if (op.offset % kDirectAlign == 0) expect_direct += op.length - op.length % kDirectAlign;
            (*io)->start(op);
        }
        std::size_t done = 0;
        while (done < batch) {
            for (const FinishedOp &f : (*io)->wait()) {
                ASSERT_TRUE(f.status) << f.status.error().message;
                ++done;
            }
        }
        i += batch;
    }
    bool direct = wfile->direct_usable.load();
    EXPECT_EQ(wfile->direct_bytes + wfile->buffered_bytes, size - start) << wfile->summary();
    if (direct) EXPECT_EQ(wfile->direct_bytes.load(), expect_direct) << wfile->summary();
    else EXPECT_EQ(wfile->direct_bytes.load(), 0u) << wfile->summary();

    struct stat st {};
    ASSERT_EQ(::fstat(out.get(), &st), 0);
    EXPECT_EQ(static_cast<uint64_t>(st.st_size), size);

    // Back again, and byte for byte with what an ordinary read sees.
    UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    auto rfile = DiskFile::open(in.get(), false, true);
    for (uint64_t at = start; at < size; at += kBlock) {
        uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(kBlock, size - at));
        std::memset(pool.block(5), 0xEE, kBlock);
        (*io)->start({IoDirection::read, rfile.get(), 5, at, len});
        auto got = (*io)->wait();
        ASSERT_EQ(got.size(), 1u);
        ASSERT_TRUE(got[0].status) << got[0].status.error().message;
        for (uint32_t b = 0; b < len; ++b)
            ASSERT_EQ(pool.block(5)[b], pattern(at + b)) << "at byte " << at + b;
        std::vector<uint8_t> plain(len);
        ASSERT_EQ(::pread(in.get(), plain.data(), len, static_cast<off_t>(at)), static_cast<ssize_t>(len));
        ASSERT_EQ(std::memcmp(plain.data(), pool.block(5), len), 0);
    }
    EXPECT_EQ(rfile->direct_bytes + rfile->buffered_bytes, size - start);
    ::unlink(path.c_str());
}

const std::vector<uint64_t> kSizes = {0, 1, 4095, 4096, 4097, kBlock - 1, kBlock, kBlock + 1, 5 * kBlock + 4097};

class DiskEngineOnFiles : public ::testing::TestWithParam<std::tuple<std::string, BlockIo::Backend>> {};

TEST_P(DiskEngineOnFiles, EverySizeAroundTheAlignmentBoundariesRoundTrips) {
    auto [where, backend] = GetParam();
    ScratchDir dir(where == "disk" ? std::filesystem::current_path().string() : "/dev/shm");
    for (uint64_t size : kSizes) round_trip(dir, size, backend);
}

TEST_P(DiskEngineOnFiles, AnUnalignedStartGoesBufferedAndStillLandsRight) {
    auto [where, backend] = GetParam();
    ScratchDir dir(where == "disk" ? std::filesystem::current_path().string() : "/dev/shm");
    round_trip(dir, 3 * kBlock + 17, backend, 1000);  // a REST offset off any sector
}

INSTANTIATE_TEST_SUITE_P(Backends, DiskEngineOnFiles,
                         ::testing::Combine(::testing::Values("disk", "tmpfs"),
                                            ::testing::Values(BlockIo::Backend::io_uring,
                                                              BlockIo::Backend::positioned_calls)));

TEST(DiskEngine, TheMachinesOwnDiskTakesDirectIo) {
    // The build directory is on a real disk in CI; O_DIRECT is the point of the engine.
    std::string path = std::filesystem::current_path().string() + "/direct-probe";
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(fd);
    auto f = DiskFile::open(fd.get(), true, true);
    ::unlink(path.c_str());
    if (!f->direct_usable) GTEST_SKIP() << "this file system refuses O_DIRECT: " << f->buffered_reason;
    EXPECT_TRUE(f->direct);
    auto off = DiskFile::open(fd.get(), true, false);
    EXPECT_FALSE(off->direct_usable.load());
    EXPECT_EQ(off->buffered_reason, "direct I/O is off");
}

TEST(DiskEngine, IoUringRegistersThePoolAsFixedBuffers) {
    Pool pool;
    auto io = BlockIo::create(pool.buffers(), 4, "test");
    ASSERT_TRUE(io);
    if (!(*io)->uses_io_uring()) GTEST_SKIP() << "no io_uring in this kernel";
    EXPECT_TRUE((*io)->uses_fixed_buffers());
    // A TCP transfer's own short-lived buffers are not pinned up front.
    auto plain = BlockIo::create(pool.buffers(), 4, "test", BlockIo::Backend::io_uring, BlockIo::Buffers::plain);
    ASSERT_TRUE(plain);
    EXPECT_TRUE((*plain)->uses_io_uring());
    EXPECT_FALSE((*plain)->uses_fixed_buffers());
}

// A file in dir that is already unlinked: gone when the test ends, whatever happens.
UniqueFd unlinked_file(const std::string &dir, const std::string &name) {
    std::string path = dir + "/" + name;
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    EXPECT_TRUE(fd) << path;
    ::unlink(path.c_str());
    return fd;
}

// One block operation through the engine, waited for.
std::vector<FinishedOp> run_op(BlockIo &io, const BlockOp &op) {
    io.start(op);
    return io.wait();
}

// A pipe: [0] its read end, [1] its write end.
std::array<UniqueFd, 2> make_pipe() {
    int p[2] = {-1, -1};
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    return {UniqueFd(p[0]), UniqueFd(p[1])};
}

TEST(DiskEngine, AFileThatEndsEarlyIsAChangedFileNotZeros) {
    UniqueFd fd = unlinked_file(std::filesystem::current_path().string(), "short-file");
    ASSERT_EQ(::ftruncate(fd.get(), 10000), 0);
    Pool pool;
    for (auto backend : {BlockIo::Backend::io_uring, BlockIo::Backend::positioned_calls}) {
        auto io = BlockIo::create(pool.buffers(), 2, "test", backend);
        auto f = DiskFile::open(fd.get(), false, true);
        auto got = run_op(**io, {IoDirection::read, f.get(), 1, 0, 20000});
        ASSERT_EQ(got.size(), 1u);
        ASSERT_FALSE(got[0].status);
        EXPECT_NE(got[0].status.error().message.find("ended at byte 10000"), std::string::npos)
            << got[0].status.error().message;
        // The file changed; the disk did not fail (EIO would say it had).
        EXPECT_EQ(got[0].status.error().code, kFileChanged);
    }
}

TEST(DiskEngine, APipeIsWrittenInOrderAtItsOwnPosition) {
    auto [r, w] = make_pipe();
    Pool pool;
    for (auto backend : {BlockIo::Backend::io_uring, BlockIo::Backend::positioned_calls}) {
        auto io = BlockIo::create(pool.buffers(), 2, "test", backend);
        auto f = DiskFile::open(w.get(), true, true);
        EXPECT_FALSE(f->seekable);
        EXPECT_FALSE(f->direct_usable.load());
        for (uint32_t i = 0; i < 3; ++i) {
            std::memset(pool.block(i), 'a' + static_cast<int>(i), 1000);
            auto got = run_op(**io, {IoDirection::write, f.get(), i, 1000ull * i, 1000});
            ASSERT_EQ(got.size(), 1u);
            ASSERT_TRUE(got[0].status) << got[0].status.error().message;
        }
        char buf[3000];
        ASSERT_EQ(::read(r.get(), buf, sizeof buf), 3000);
        EXPECT_EQ(buf[0], 'a');
        EXPECT_EQ(buf[1500], 'b');
        EXPECT_EQ(buf[2999], 'c');
    }
}

TEST(DiskEngine, APipeIsNeverReadOutOfOrder) {
    auto [r, w] = make_pipe();
    Pool pool;
    for (auto backend : {BlockIo::Backend::io_uring, BlockIo::Backend::positioned_calls}) {
        auto io = BlockIo::create(pool.buffers(), 2, "test", backend);
        auto f = DiskFile::open(r.get(), false, true);
        auto got = run_op(**io, {IoDirection::read, f.get(), 0, 4096, 1000});
        ASSERT_EQ(got.size(), 1u);
        EXPECT_FALSE(got[0].status);  // refused, not read from wherever the pipe is
    }
}

TEST(DiskEngine, AnAppendOnlyFileIsWrittenInOrderAtItsEnd) {
    std::string path = std::filesystem::current_path().string() + "/append-file";
    {
        UniqueFd seed(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
        ASSERT_EQ(::write(seed.get(), "head", 4), 4);
    }
    Pool pool;
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
    auto f = DiskFile::open(fd.get(), true, true);
    EXPECT_FALSE(f->seekable);  // >> writes at its end whatever offset is named
    EXPECT_FALSE(f->direct_usable.load());  // an O_DIRECT twin would not append
    auto io = BlockIo::create(pool.buffers(), 2, "test", BlockIo::Backend::io_uring);
    for (uint32_t i = 0; i < 2; ++i) {
        std::memset(pool.block(i), 'x' + static_cast<int>(i), 8192);
        auto got = run_op(**io, {IoDirection::write, f.get(), i, 8192ull * i, 8192});
        ASSERT_EQ(got.size(), 1u);
        ASSERT_TRUE(got[0].status) << got[0].status.error().message;
    }
    std::string content(4 + 2 * 8192, '\0');
    UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_EQ(::read(in.get(), content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::unlink(path.c_str());
    EXPECT_EQ(content.substr(0, 4), "head");
    EXPECT_EQ(content[4], 'x');
    EXPECT_EQ(content[4 + 8192], 'y');
    EXPECT_EQ(f->buffered_bytes.load(), 2u * 8192);
}

TEST(Preallocate, TmpfsIsCheckedForRoomNotFilledWithPages) {
    ScratchDir dir("/dev/shm");
    UniqueFd fd = unlinked_file(dir, "reserved");
    ASSERT_TRUE(fd);
    ASSERT_TRUE(rftp::middleware::preallocate(fd.get(), 0, 64u << 20));
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_blocks, 0);  // no 64 MiB of pages cleared for nothing
    auto too_big = rftp::middleware::preallocate(fd.get(), 0, 1ull << 60);
    ASSERT_FALSE(too_big);
    EXPECT_EQ(too_big.error().code, -ENOSPC);
    EXPECT_NE(too_big.error().message.find("no room for"), std::string::npos);
}

// A device node's file system is /dev's (devtmpfs, a tmpfs), whose free
// space says nothing about the device: an RDMA download to /dev/sdX was
// refused for "no room" once the file outgrew /dev's free memory.
TEST(Preallocate, ADeviceHasNothingToReserve) {
    UniqueFd fd(::open("/dev/zero", O_WRONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    EXPECT_TRUE(rftp::middleware::preallocate(fd.get(), 0, 1ull << 50));
    EXPECT_TRUE(rftp::middleware::preallocate(fd.get(), 0, 1ull << 50, rftp::middleware::ReservedSize::whole));
}

TEST(Preallocate, TheMachinesDiskReservesAndGivesBack) {
    UniqueFd fd = unlinked_file(std::filesystem::current_path().string(), "reserved-file");
    ASSERT_TRUE(fd);
    ASSERT_TRUE(rftp::middleware::preallocate(fd.get(), 0, 8u << 20));
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    if (st.st_blocks == 0) GTEST_SKIP() << "this file system does not preallocate";
    EXPECT_EQ(st.st_size, 0);  // the visible size grows only as bytes arrive
    rftp::middleware::release_reservation(fd.get());
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_blocks, 0);
}

TEST(Preallocate, AWholeReservationSetsTheSizeAndAFailedOneLeavesItAsItWas) {
    UniqueFd fd = unlinked_file(std::filesystem::current_path().string(), "reserved-whole");
    ASSERT_TRUE(fd);
    ASSERT_EQ(::pwrite(fd.get(), "head", 4, 0), 4);
    using rftp::middleware::ReservedSize;
    ASSERT_TRUE(rftp::middleware::preallocate(fd.get(), 4, 8u << 20, ReservedSize::whole));
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    if (st.st_blocks <= 8) GTEST_SKIP() << "this file system does not preallocate";
    EXPECT_EQ(st.st_size, 4 + (8 << 20));  // no write will extend it
    char head[4] = {};
    ASSERT_EQ(::pread(fd.get(), head, 4, 0), 4);
    EXPECT_EQ(std::string(head, 4), "head");
    // Past what the file system can hold: refused, and the size is as before.
    ASSERT_EQ(::ftruncate(fd.get(), 4), 0);
    auto too_big = rftp::middleware::preallocate(fd.get(), 4, 1ull << 62, ReservedSize::whole);
    ASSERT_FALSE(too_big);
    EXPECT_EQ(too_big.error().code, -EFBIG);
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_size, 4);
}

TEST(Preallocate, CutToLeavesAFileOfThatSizeUntouched) {
    UniqueFd fd = unlinked_file(std::filesystem::current_path().string(), "cut");
    ASSERT_TRUE(fd);
    ASSERT_EQ(::pwrite(fd.get(), "12345678", 8, 0), 8);
    const timespec long_ago[2] = {{1000000000, 0}, {1000000000, 0}};
    ASSERT_EQ(::futimens(fd.get(), long_ago), 0);
    rftp::middleware::cut_to(fd.get(), 8);
    struct stat st {};
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_mtim.tv_sec, 1000000000);  // a digest taken of it stays valid
    rftp::middleware::cut_to(fd.get(), 3);
    ASSERT_EQ(::fstat(fd.get(), &st), 0);
    EXPECT_EQ(st.st_size, 3);
    EXPECT_NE(st.st_mtim.tv_sec, 1000000000);
}

TEST(DiskEngine, WakeEndsAWaitWithNothingFinished) {
    Pool pool;
    auto io = BlockIo::create(pool.buffers(), 2, "test");
    (*io)->wake();
    EXPECT_TRUE((*io)->wait().empty());
}

}  // namespace

namespace {

TEST(DiskEngine, AnOperationBeyondTheDepthIsRefusedNotStarted) {
    // Stream buffers outnumber the depth by one (the block on the wire): a
    // caller that starts one too many gets a failure back, never a slot
    // overrun, and what was in flight still finishes.
    ScratchDir dir("/dev/shm");
    std::string path = dir + "/three-blocks";
    UniqueFd out(::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    ASSERT_TRUE(out);
    ASSERT_EQ(::ftruncate(out.get(), 3 * kBlock), 0);
    auto file = DiskFile::open(out.get(), false, true);
    Pool pool;
    // (pread/pwrite finish each operation inside start(): never two in flight.)
    auto io = BlockIo::create(pool.buffers(), 2, "test", BlockIo::Backend::io_uring);
    ASSERT_TRUE(io) << io.error().message;
    if (!(*io)->uses_io_uring()) GTEST_SKIP() << "no io_uring here";
    {
        for (uint32_t b = 0; b < 3; ++b) (*io)->start({IoDirection::read, file.get(), b, b * kBlock, kBlock});
        EXPECT_LE((*io)->in_flight(), 2u);
        unsigned ok = 0, refused = 0;
        while ((*io)->pending())
            for (const FinishedOp &f : (*io)->wait()) {
                if (f.status) ++ok;
                else if (f.status.error().code == -EBUSY && f.op.block == 2) ++refused;
                else ADD_FAILURE() << "block " << f.op.block << ": " << f.status.error().message;
            }
        EXPECT_EQ(ok, 2u);
        EXPECT_EQ(refused, 1u);
    }
}

}  // namespace
