// The TCP data path on real loopback sockets and real files: what is sent
// arrives byte for byte, in any block order, and broken peers are errors.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "middleware/integrity/block_checksum.h"
#include "middleware/integrity/sha256.h"
#include "middleware/tcp/block_resends.h"
#include "middleware/tcp/parallel_transfer.h"
#include "middleware/tcp/socket_io.h"
#include "middleware/tcp/stream_transfer.h"
#include "protocol/block_frame.h"
#include "tests/unit/loopback_listener.h"

using namespace rftp;
using namespace rftp::middleware;

namespace {

// n connected loopback TCP pairs: first = sender side, second = receiver side.
std::vector<std::pair<UniqueFd, UniqueFd>> tcp_pairs(int n) {
    LoopbackListener listener(n);
    const sockaddr_in &a = listener.address;
    std::vector<std::pair<UniqueFd, UniqueFd>> pairs;
    for (int i = 0; i < n; ++i) {
        UniqueFd c(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        EXPECT_EQ(::connect(c.get(), reinterpret_cast<const sockaddr *>(&a), sizeof a), 0);
        UniqueFd s(::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
        timeval tv{5, 0};
        ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        ::setsockopt(c.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        pairs.emplace_back(std::move(c), std::move(s));
    }
    return pairs;
}

struct TempFile {
    std::string path;
    UniqueFd fd;
    explicit TempFile(const std::string &content = "") {
        char tmpl[] = "/tmp/rftp-unit-XXXXXX";
        fd.reset(::mkstemp(tmpl));
        path = tmpl;
        if (!content.empty()) {
            EXPECT_EQ(::write(fd.get(), content.data(), content.size()), (ssize_t)content.size());
        }
    }
    ~TempFile() { ::unlink(path.c_str()); }
    std::string read_all() const {
        std::string out;
        char buf[65536];
        off_t off = 0;
        for (ssize_t n; (n = ::pread(fd.get(), buf, sizeof buf, off)) > 0; off += n) out.append(buf, n);
        return out;
    }
};

// A data frame as send_parallel writes it: header, payload, CRC32C trailer.
std::string data_frame(const std::string &payload, uint64_t offset, bool damage = false) {
    auto h = ftp::encode_frame({ftp::kFrameData, payload.size(), offset});
    std::string out(h.begin(), h.end());
    out += payload;
    uint8_t trailer[kBlockTrailerBytes + 1] = {};
    std::vector<uint8_t> body(payload.begin(), payload.end());
    body.resize(payload.size() + kBlockTrailerBytes);
    put_block_trailer(body.data(), static_cast<uint32_t>(payload.size()), crc32c({body.data(), payload.size()}));
    std::copy(body.end() - kBlockTrailerBytes, body.end(), trailer);
    out.append(reinterpret_cast<const char *>(trailer), kBlockTrailerBytes);
    if (damage) out[h.size() + payload.size() / 2] ^= 0x10;
    return out;
}

std::string random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (auto &c : s) c = static_cast<char>(rng());
    return s;
}

}  // namespace

TEST(StreamTransfer, FileArrivesWholeAtOffset) {
    std::string data = random_bytes(3 * 1024 * 1024 + 7, 1);
    TempFile src(data), dst;
    auto pairs = tcp_pairs(1);
    TransferProgress sp, rp;
    Result<uint64_t> got;
    std::thread receiver([&] { got = receive_stream(pairs[0].second.get(), dst.fd.get(), 0, rp); });
    ASSERT_TRUE(send_stream(pairs[0].first.get(), src.fd.get(), 0, data.size(), sp));
    pairs[0].first.reset();
    receiver.join();
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(*got, data.size());
    EXPECT_EQ(dst.read_all(), data);
    EXPECT_EQ(sp.bytes.load(), data.size());
    EXPECT_EQ(rp.bytes.load(), data.size());
}

TEST(StreamTransfer, ResumesFromOffset) {
    std::string data = random_bytes(100000, 2);
    TempFile src(data), dst(data.substr(0, 40000));
    auto pairs = tcp_pairs(1);
    TransferProgress sp, rp;
    Result<uint64_t> got;
    std::thread receiver([&] { got = receive_stream(pairs[0].second.get(), dst.fd.get(), 40000, rp); });
    ASSERT_TRUE(send_stream(pairs[0].first.get(), src.fd.get(), 40000, data.size(), sp));
    pairs[0].first.reset();
    receiver.join();
    ASSERT_TRUE(got);
    EXPECT_EQ(dst.read_all(), data);
}

// One file from src to dst over n loopback connections, from start, both
// ends with the same queue depth and (digest) asking for the SHA-256.
struct ParallelRun {
    Result<ParallelSendResult> sent;
    Result<ParallelReceiveResult> got;
};

ParallelRun run_parallel(const TempFile &src, const TempFile &dst, std::size_t size, int n, uint64_t start,
                         unsigned depth, bool digest) {
    auto pairs = tcp_pairs(n);
    std::vector<int> send_socks, recv_socks;
    for (auto &p : pairs) {
        send_socks.push_back(p.first.get());
        recv_socks.push_back(p.second.get());
    }
    TransferProgress sp, rp;
    RangeSet received(start);
    ParallelRun run;
    std::thread receiver([&] {
        ParallelReceivePlan plan{dst.fd.get(), start, 64 * 1024, 1ull << 62};
        plan.queue_depth = depth;
        plan.digest = digest;
        run.got = receive_parallel(recv_socks, plan, received, rp);
    });
    ParallelSendPlan plan{src.fd.get(), start, size, 64 * 1024};
    plan.queue_depth = depth;
    plan.digest = digest;
    run.sent = send_parallel(send_socks, plan, sp);
    for (auto &p : pairs) p.first.reset();
    receiver.join();
    return run;
}

std::string sha256_of(const std::string &data) {
    Sha256 whole;
    whole.update(reinterpret_cast<const uint8_t *>(data.data()), data.size());
    return whole.hex();
}

// Streams, file size, and blocks each stream keeps in flight (storage.queue_depth).
class ParallelSizes : public ::testing::TestWithParam<std::tuple<int, std::size_t, unsigned>> {};

TEST_P(ParallelSizes, EveryByteArrivesOnce) {
    auto [streams, size, depth] = GetParam();
    std::string data = random_bytes(size, static_cast<unsigned>(size));
    TempFile src(data), dst;
    auto run = run_parallel(src, dst, data.size(), streams, 0, depth, false);
    ASSERT_TRUE(run.sent) << run.sent.error().message;
    ASSERT_TRUE(run.got) << run.got.error().message;
    EXPECT_EQ(run.got->size, data.size());
    EXPECT_EQ(run.sent->sha256, std::nullopt);  // none asked for
    EXPECT_EQ(dst.read_all(), data);
}

// With a digest asked for, both ends take the file's SHA-256 from the
// blocks as they pass, across every stream, whatever order they land in.
TEST_P(ParallelSizes, BothEndsTakeTheFilesDigestOnTheWay) {
    auto [streams, size, depth] = GetParam();
    std::string data = random_bytes(size, static_cast<unsigned>(size) + 1);
    TempFile src(data), dst;
    auto run = run_parallel(src, dst, data.size(), streams, 0, depth, true);
    ASSERT_TRUE(run.sent) << run.sent.error().message;
    ASSERT_TRUE(run.got) << run.got.error().message;
    EXPECT_EQ(run.sent->sha256, sha256_of(data));
    EXPECT_EQ(run.got->sha256, sha256_of(data));
    EXPECT_EQ(dst.read_all(), data);
}

// From a restart offset there is no whole file to digest: the file is read for it.
TEST(ParallelTransfer, NoDigestIsTakenFromARestartOffset) {
    std::string data = random_bytes(200000, 12);
    TempFile src(data), dst(data.substr(0, 65536));
    auto run = run_parallel(src, dst, data.size(), 2, 65536, disk::DiskOptions{}.queue_depth, true);
    ASSERT_TRUE(run.sent) << run.sent.error().message;
    ASSERT_TRUE(run.got) << run.got.error().message;
    EXPECT_EQ(run.sent->sha256, std::nullopt);
    EXPECT_EQ(run.got->sha256, std::nullopt);
    EXPECT_EQ(dst.read_all(), data);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ParallelSizes,
                         ::testing::Combine(::testing::Values(1, 4),
                                            ::testing::Values(0u, 1u, 65535u, 65536u, 65537u, 1000003u),
                                            ::testing::Values(1u, 4u, 9u)));

TEST(ParallelTransfer, ConnectionDroppedMidwayIsAnErrorAndPrefixIsKept) {
    std::string data = random_bytes(4 * 65536, 9);
    TempFile dst;
    auto pairs = tcp_pairs(2);
    std::vector<int> recv_socks{pairs[0].second.get(), pairs[1].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    Result<ParallelReceiveResult> got;
    std::thread receiver([&] { got = receive_parallel(recv_socks, {dst.fd.get(), 0, 65536, 1ull << 62}, received, rp); });

    // Stream 1 sends block 0 and a proper EOD; stream 2 sends half of block 1 and dies.
    std::string f0 = data_frame(data.substr(0, 65536), 0);
    ASSERT_EQ(::write(pairs[0].first.get(), f0.data(), f0.size()), (ssize_t)f0.size());
    auto eod = ftp::encode_frame({ftp::kFrameEod, 0, data.size()});
    ASSERT_EQ(::write(pairs[0].first.get(), eod.data(), eod.size()), (ssize_t)eod.size());
    pairs[0].first.reset();
    auto h1 = ftp::encode_frame({ftp::kFrameData, 65536, 65536});
    ASSERT_EQ(::write(pairs[1].first.get(), h1.data(), h1.size()), (ssize_t)h1.size());
    ASSERT_EQ(::write(pairs[1].first.get(), data.data() + 65536, 1000), 1000);
    // Die only once block 0 is on disk: the first failure stops every
    // stream, and this test is about what was complete by then.
    for (int i = 0; i < 500 && rp.bytes.load() < 65536; ++i) ::usleep(10000);
    pairs[1].first.reset();
    receiver.join();

    EXPECT_FALSE(got);
    EXPECT_EQ(received.contiguous_end(), 65536u);
}

// Reads one frame header that came back from the receiver (or "" at its end).
std::string read_request(int sock) {
    std::string got(ftp::kFrameHeaderSize, '\0');
    std::size_t have = 0;
    while (have < got.size()) {
        ssize_t n = ::read(sock, got.data() + have, got.size() - have);
        if (n <= 0) return "";
        have += static_cast<std::size_t>(n);
    }
    return got;
}

std::string resend_request(uint64_t offset, uint64_t count) {
    auto h = ftp::encode_frame({ftp::kFrameResend, count, offset});
    return std::string(h.begin(), h.end());
}

std::string eod_frame(uint64_t size) {
    auto h = ftp::encode_frame({ftp::kFrameEod, 0, size});
    return std::string(h.begin(), h.end());
}

void send_raw(int sock, const std::string &bytes) {
    ASSERT_EQ(::write(sock, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

TEST(ParallelTransfer, ADamagedBlockIsAskedForAgainOnItsConnection) {
    std::string data = random_bytes(3 * 65536, 10);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].first.get();
    std::string asked, closed = "not read";
    std::thread sender([&] {
        send_raw(wire, data_frame(data.substr(0, 65536), 0) + data_frame(data.substr(65536, 65536), 65536, true) +
                           data_frame(data.substr(131072), 131072) + eod_frame(data.size()));
        asked = read_request(wire);  // the damaged block, asked for after the EOD went out
        send_raw(wire, data_frame(data.substr(65536, 65536), 65536) + eod_frame(data.size()));
        closed = read_request(wire);  // the receiver's echo: every block arrived intact
        ::shutdown(wire, SHUT_WR);
    });
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, {dst.fd.get(), 0, 65536, 1ull << 62}, received, rp);
    sender.join();
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(asked, resend_request(65536, 65536));
    EXPECT_EQ(closed, eod_frame(data.size()));
    EXPECT_EQ(dst.read_all(), data);
    EXPECT_EQ(rp.bytes.load(), data.size());  // the block counts once
    EXPECT_EQ(rp.blocks_resent.load(), 1u);
}

TEST(ParallelTransfer, ABlockDamagedEveryTimeFailsOnItsFourthAttempt) {
    std::string data = random_bytes(2 * 65536, 11);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].first.get();
    std::vector<std::string> asked;
    std::thread sender([&] {
        send_raw(wire, data_frame(data.substr(0, 65536), 0) + data_frame(data.substr(65536), 65536, true) +
                           eod_frame(data.size()));
        for (std::string r; !(r = read_request(wire)).empty();) {
            asked.push_back(r);
            std::string again = data_frame(data.substr(65536), 65536, true) + eod_frame(data.size());
            (void)!::write(wire, again.data(), again.size());
        }
    });
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, {dst.fd.get(), 0, 65536, 1ull << 62}, received, rp);
    pairs[0].second.reset();
    sender.join();
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("the block at byte 65536 (65536 bytes) failed its CRC32C check 4 times"),
              std::string::npos)
        << got.error().message;
    EXPECT_EQ(got.error().code, -EBADMSG);
    EXPECT_EQ(asked, std::vector<std::string>(3, resend_request(65536, 65536)));
    EXPECT_EQ(received.contiguous_end(), 65536u);  // the block before it, and nothing of it
    EXPECT_EQ(dst.read_all().find(data.substr(65536, 100)), std::string::npos);
}

// The receiver's side of the end: it may close only once the blocks it asked
// for came again; a sender that ends without them fails the transfer.
TEST(ParallelTransfer, ASenderThatEndsWithoutTheBlockAskedForFails) {
    std::string data = random_bytes(2 * 65536, 12);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    std::string wire = data_frame(data.substr(0, 65536), 0) + data_frame(data.substr(65536), 65536, true) +
                       eod_frame(data.size());
    send_raw(pairs[0].first.get(), wire);
    ::shutdown(pairs[0].first.get(), SHUT_WR);
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, {dst.fd.get(), 0, 65536, 1ull << 62}, received, rp);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("damaged blocks"), std::string::npos) << got.error().message;
    EXPECT_EQ(read_request(pairs[0].first.get()), resend_request(65536, 65536));
}

// The sender's side: a block asked for again is read from the file again and
// sent again on the same connection, counted once; the sender ends only when
// the receiver echoes the EOD.
TEST(ParallelTransfer, TheSenderSendsABlockAgainWhenAsked) {
    std::string data = random_bytes(3 * 65536 + 5, 13);
    TempFile src(data);
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].second.get();
    std::vector<std::pair<uint64_t, std::string>> frames;
    std::thread receiver([&] {
        bool asked = false;
        for (;;) {
            std::string h = read_request(wire);
            if (h.empty()) return;
            uint64_t count = 0, offset = 0;
            for (int i = 0; i < 8; ++i) count = count << 8 | static_cast<uint8_t>(h[1 + i]);
            for (int i = 0; i < 8; ++i) offset = offset << 8 | static_cast<uint8_t>(h[9 + i]);
            if (h[0] == ftp::kFrameEod) {
                if (!asked) {  // ask after the EOD: the sender must still be listening
                    std::string r = resend_request(65536, 65536);
                    send_raw(wire, r);
                    asked = true;
                    continue;
                }
                send_raw(wire, eod_frame(offset));
                ::shutdown(wire, SHUT_WR);
                continue;  // then read the sender's end
            }
            std::string body(count + kBlockTrailerBytes, '\0');
            ASSERT_EQ(read_full(wire, body.data(), body.size()).value_or(0), body.size());
            frames.emplace_back(offset, body.substr(0, count));
        }
    });
    std::vector<int> socks{pairs[0].first.get()};
    TransferProgress sp;
    auto sent = send_parallel(socks, {src.fd.get(), 0, data.size(), 65536}, sp);
    receiver.join();
    ASSERT_TRUE(sent) << sent.error().message;
    ASSERT_EQ(frames.size(), 5u);
    EXPECT_EQ(frames.back().first, 65536u);
    EXPECT_EQ(frames.back().second, data.substr(65536, 65536));
    EXPECT_EQ(sp.bytes.load(), data.size());
    EXPECT_EQ(sp.blocks_resent.load(), 1u);
}

// A receiver that failed only closes (or is shut down with its transfer):
// the sender must not take that for the end, or the server would answer
// 226 to a download the client gave up on.
TEST(ParallelTransfer, TheSenderFailsWhenTheReceiverClosesWithoutConfirming) {
    std::string data = random_bytes(2 * 65536, 15);
    TempFile src(data);
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].second.get();
    std::thread receiver([&] {
        for (;;) {
            std::string h = read_request(wire);
            if (h.empty() || h[0] == ftp::kFrameEod) break;
            uint64_t count = 0;
            for (int i = 0; i < 8; ++i) count = count << 8 | static_cast<uint8_t>(h[1 + i]);
            std::string body(count + kBlockTrailerBytes, '\0');
            ASSERT_EQ(read_full(wire, body.data(), body.size()).value_or(0), body.size());
        }
        ::shutdown(wire, SHUT_WR);  // every block read, yet no echo
    });
    std::vector<int> socks{pairs[0].first.get()};
    TransferProgress sp;
    auto sent = send_parallel(socks, {src.fd.get(), 0, data.size(), 65536}, sp);
    receiver.join();
    ASSERT_FALSE(sent);
    EXPECT_NE(sent.error().message.find("without confirming"), std::string::npos) << sent.error().message;
}

// send_parallel against a receiver that sends back back_bytes, then only
// reads: what the sender makes of frames that come back.
Status send_to_a_receiver_that_says(const std::string &data, uint32_t block, const std::string &back_bytes) {
    TempFile src(data);
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].second.get();
    std::thread receiver([&] {
        send_raw(wire, back_bytes);
        char sink[65536];
        while (::read(wire, sink, sizeof sink) > 0) {}
    });
    std::vector<int> socks{pairs[0].first.get()};
    TransferProgress sp;
    auto sent = send_parallel(socks, {src.fd.get(), 0, data.size(), block}, sp);
    ::shutdown(wire, SHUT_RDWR);
    receiver.join();
    if (!sent) return fail(sent.error());
    return {};
}

// A receiver's echo must name the file's size.
TEST(ParallelTransfer, TheSenderRefusesAnEchoOfAnotherSize) {
    std::string data = random_bytes(65536, 16);
    Status sent = send_to_a_receiver_that_says(data, 65536, eod_frame(data.size() - 1));
    ASSERT_FALSE(sent);
    const std::string &why = sent.error().message;
    EXPECT_TRUE(why.find("not offered") != std::string::npos || why.find("not 65536") != std::string::npos) << why;
}

// Neither side keeps more than kMaxResendsPerConnection requests for a peer:
// a receiver fails on the next damaged block, a sender on the next request.
TEST(ParallelTransfer, OneConnectionTakesABoundedNumberOfResends) {
    const uint64_t blocks = kMaxResendsPerConnection + 2;
    std::string data = random_bytes(blocks * 4096, 17);
    {
        TempFile dst;
        auto pairs = tcp_pairs(1);
        const int wire = pairs[0].first.get();
        std::thread sender([&] {
            std::string all;
            for (uint64_t b = 0; b < blocks; ++b) all += data_frame(data.substr(b * 4096, 4096), b * 4096, true);
            (void)!::write(wire, all.data(), all.size());
            char sink[4096];
            while (::read(wire, sink, sizeof sink) > 0) {}
        });
        std::vector<int> socks{pairs[0].second.get()};
        TransferProgress rp;
        RangeSet received(0);
        auto got = receive_parallel(socks, {dst.fd.get(), 0, 4096, 1ull << 62}, received, rp);
        pairs[0].second.reset();
        sender.join();
        ASSERT_FALSE(got);
        EXPECT_NE(got.error().message.find("on one connection"), std::string::npos) << got.error().message;
        EXPECT_EQ(got.error().code, -EBADMSG);
        EXPECT_EQ(rp.blocks_resent.load(), kMaxResendsPerConnection);
    }
    std::string requests;
    for (uint64_t b = 0; b <= kMaxResendsPerConnection; ++b) requests += resend_request(b * 4096, 4096);
    Status sent = send_to_a_receiver_that_says(data, 4096, requests);
    ASSERT_FALSE(sent);
    EXPECT_NE(sent.error().message.find("on one connection"), std::string::npos) << sent.error().message;
}

// The receiver is trusted with nothing: a request that names no block of the
// transfer, or asks for one block a fourth time, ends it.
TEST(ParallelTransfer, TheSenderRefusesRequestsForNoBlockOrTooMany) {
    std::string data = random_bytes(2 * 65536, 14);
    for (auto requests : {std::vector<std::string>{resend_request(100, 65536)},
                          std::vector<std::string>{resend_request(65536, 1000)},
                          std::vector<std::string>(4, resend_request(0, 65536))}) {
        std::string all;
        for (const auto &r : requests) all += r;
        Status sent = send_to_a_receiver_that_says(data, 65536, all);
        ASSERT_FALSE(sent);
        const std::string &why = sent.error().message;
        EXPECT_TRUE(why.find("no block of this transfer") != std::string::npos || why.find("4 times") != std::string::npos)
            << why;
    }
}

// One file over two streams, each side with its own view of OPTS BLOCKSUM.
Result<ParallelReceiveResult> move_with_checksums(const std::string &data, TempFile &dst, bool sender_sums,
                                                  bool receiver_sums) {
    TempFile src(data);
    auto pairs = tcp_pairs(2);
    std::vector<int> send_socks{pairs[0].first.get(), pairs[1].first.get()};
    std::vector<int> recv_socks{pairs[0].second.get(), pairs[1].second.get()};
    TransferProgress sp, rp;
    RangeSet received(0);
    Result<ParallelReceiveResult> got;
    std::thread receiver([&] {
        ParallelReceivePlan plan{dst.fd.get(), 0, 65536, 1ull << 62};
        plan.block_checksums = receiver_sums;
        got = receive_parallel(recv_socks, plan, received, rp);
    });
    ParallelSendPlan plan{src.fd.get(), 0, data.size(), 65536};
    plan.block_checksums = sender_sums;
    (void)send_parallel(send_socks, plan, sp);  // fails too once the receiver gives up
    for (auto &pr : pairs) pr.first.reset();
    receiver.join();
    return got;
}

TEST(ParallelTransfer, WithoutBlockChecksumsTheTrailerIsZeroAndUnchecked) {
    std::string data = random_bytes(5 * 65536 + 7, 12);
    TempFile agreed;
    auto got = move_with_checksums(data, agreed, false, false);
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(agreed.read_all(), data);
    // A receiver that still checks finds the zero trailer wrong: the two
    // ends must agree, and a disagreement is loud, never silent.
    TempFile checked;
    got = move_with_checksums(data, checked, false, true);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("CRC32C"), std::string::npos) << got.error().message;
}

TEST(ParallelTransfer, HostileFramesAreRefused) {
    for (auto frame : {ftp::FrameHeader{ftp::kFrameData, 1u << 30, 0},    // longer than agreed
                       ftp::FrameHeader{ftp::kFrameData, 10, 5},            // before restart offset
                       ftp::FrameHeader{0x77, 10, 100}}) {                 // unknown descriptor
        TempFile dst;
        auto pairs = tcp_pairs(1);
        auto h = ftp::encode_frame(frame);
        ASSERT_EQ(::write(pairs[0].first.get(), h.data(), h.size()), (ssize_t)h.size());
        std::string payload(10, 'x');
        ASSERT_EQ(::write(pairs[0].first.get(), payload.data(), payload.size()), 10);
        pairs[0].first.reset();
        std::vector<int> socks{pairs[0].second.get()};
        TransferProgress rp;
        RangeSet received(100);
        EXPECT_FALSE(receive_parallel(socks, {dst.fd.get(), 100, 65536, 1ull << 62}, received, rp));
    }
}

// A frame's header is not under its CRC32C: a sender that labels a block
// with a range already received (a bug, or a damaged offset) must be refused
// before it is written, or the verified prefix a resume trusts is overwritten.
// One of the two labels is wrong, and the block it sent astray may be
// written where another belongs: nothing received is vouched for then.
TEST(ParallelTransfer, ABlockOverlappingOneReceivedIsRefusedUnwritten) {
    std::string data = random_bytes(2 * 65536, 12);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    send_raw(pairs[0].first.get(), data_frame(data.substr(0, 65536), 0) + data_frame(data.substr(65536), 0) +
                                       eod_frame(data.size()));
    pairs[0].first.reset();
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, {dst.fd.get(), 0, 65536, 1ull << 62}, received, rp);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("overlaps"), std::string::npos) << got.error().message;
    EXPECT_EQ(received.contiguous_end(), 0u);
    EXPECT_TRUE(dst.read_all().substr(0, 65536) == data.substr(0, 65536)) << "the received block was overwritten";
}

// Block k starts at start + k x block: a label off that grid (a damaged
// offset's low bits) is refused before its bytes go anywhere.
TEST(ParallelTransfer, ABlockOffTheBlockGridIsRefusedUnwritten) {
    std::string data = random_bytes(2 * 65536, 13);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    send_raw(pairs[0].first.get(), data_frame(data.substr(0, 65536), 100) + data_frame(data.substr(65536), 100 + 32768) +
                                       eod_frame(100 + data.size()));
    pairs[0].first.reset();
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(100);
    auto got = receive_parallel(socks, {dst.fd.get(), 100, 65536, 1ull << 62}, received, rp);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("not where a block starts"), std::string::npos) << got.error().message;
    EXPECT_EQ(received.contiguous_end(), 100u + 65536);
    EXPECT_EQ(dst.read_all().size(), 100u + 65536);
}

// A receiver that knows the file's size holds buffers only that large: a
// frame longer than what is left of the file never reaches them.
TEST(ParallelTransfer, AFrameLongerThanTheAnnouncedFileIsRefused) {
    TempFile dst;
    auto pairs = tcp_pairs(1);
    auto h = ftp::encode_frame({ftp::kFrameData, 5000, 0});
    ASSERT_EQ(::write(pairs[0].first.get(), h.data(), h.size()), (ssize_t)h.size());
    std::string payload(5000 + kBlockTrailerBytes, 'x');
    ASSERT_EQ(::write(pairs[0].first.get(), payload.data(), payload.size()), (ssize_t)payload.size());
    pairs[0].first.reset();
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, {dst.fd.get(), 0, 65536, 1000}, received, rp);
    ASSERT_FALSE(got);
    EXPECT_NE(got.error().message.find("frame length 5000"), std::string::npos) << got.error().message;
    EXPECT_EQ(dst.read_all(), "");
}

// ---- Downloads of one block without the echo (OPTS DATAKEEP ON UNECHOED) ----

namespace {

std::string unechoed_eod_frame(uint64_t size) {
    auto h = ftp::encode_frame({ftp::kFrameEodUnechoed, 0, size});
    return std::string(h.begin(), h.end());
}

// Whether any byte came back on sock within ms milliseconds (a receiver
// that failed may end its side: that sends nothing).
bool anything_sent_back(int sock, int ms) {
    pollfd p{sock, POLLIN, 0};
    if (::poll(&p, 1, ms) <= 0) return false;
    char byte;
    return ::recv(sock, &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

ParallelReceivePlan unechoed_plan(const TempFile &dst) {
    ParallelReceivePlan plan{dst.fd.get(), 0, 65536, 1ull << 62};
    plan.end = ConnectionEnd::keep_open;
    plan.unechoed_ok = true;
    return plan;
}

}  // namespace

TEST(UnechoedEnd, AOneBlockTransferEndsWithoutAnEchoAndTheNextFollows) {
    std::string one = random_bytes(5000, 20), two = random_bytes(65536, 21);
    TempFile first, second;
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].first.get();
    send_raw(wire, data_frame(one, 0) + unechoed_eod_frame(one.size()) + data_frame(two, 0) +
                       unechoed_eod_frame(two.size()));
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0), again(0);
    auto got = receive_parallel(socks, unechoed_plan(first), received, rp);
    ASSERT_TRUE(got) << got.error().message;
    auto next = receive_parallel(socks, unechoed_plan(second), again, rp);
    ASSERT_TRUE(next) << next.error().message;
    EXPECT_EQ(first.read_all(), one);
    EXPECT_EQ(second.read_all(), two);
    EXPECT_FALSE(anything_sent_back(wire, 100));
}

TEST(UnechoedEnd, IsRefusedWhereNotAgreedOrAfterMoreThanOneBlock) {
    std::string data = random_bytes(2 * 65536, 22);
    for (bool agreed : {false, true}) {
        TempFile dst;
        auto pairs = tcp_pairs(1);
        const int wire = pairs[0].first.get();
        std::string frames = agreed ? data_frame(data.substr(0, 65536), 0) + data_frame(data.substr(65536), 65536)
                                    : data_frame(data.substr(0, 100), 0);
        send_raw(wire, frames + unechoed_eod_frame(agreed ? data.size() : 100));
        ParallelReceivePlan plan = unechoed_plan(dst);
        plan.unechoed_ok = agreed;
        std::vector<int> socks{pairs[0].second.get()};
        TransferProgress rp;
        RangeSet received(0);
        auto got = receive_parallel(socks, plan, received, rp);
        ASSERT_FALSE(got);
        EXPECT_NE(got.error().message.find(agreed ? "more than one block" : "did not agree"), std::string::npos)
            << got.error().message;
        EXPECT_FALSE(anything_sent_back(wire, 100));
    }
}

TEST(UnechoedEnd, ADamagedOnlyBlockFailsTheTransferWithoutAskingForIt) {
    std::string data = random_bytes(40000, 23);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].first.get();
    send_raw(wire, data_frame(data, 0, true) + unechoed_eod_frame(data.size()));
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, unechoed_plan(dst), received, rp);
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, -EBADMSG);
    EXPECT_NE(got.error().message.find("fetch the file again"), std::string::npos) << got.error().message;
    EXPECT_FALSE(anything_sent_back(wire, 100));
    EXPECT_EQ(received.contiguous_end(), 0u);
    EXPECT_EQ(rp.blocks_resent.load(), 0u);  // not asked for: no note says it was sent again
}

// Agreed, a damaged block of a larger transfer is asked for only after the
// EOD frame: nothing goes back while the sender may still be sending.
TEST(UnechoedEnd, ADamagedBlockIsAskedForOnlyAfterTheEchoedEnd) {
    std::string data = random_bytes(3 * 65536, 24);
    TempFile dst;
    auto pairs = tcp_pairs(1);
    const int wire = pairs[0].first.get();
    bool quiet_before_end = false;
    std::string asked, echo;
    std::thread sender([&] {
        send_raw(wire, data_frame(data.substr(0, 65536), 0, true) + data_frame(data.substr(65536, 65536), 65536));
        quiet_before_end = !anything_sent_back(wire, 300);
        send_raw(wire, data_frame(data.substr(131072), 131072) + eod_frame(data.size()));
        asked = read_request(wire);
        send_raw(wire, data_frame(data.substr(0, 65536), 0) + eod_frame(data.size()));
        echo = read_request(wire);
    });
    std::vector<int> socks{pairs[0].second.get()};
    TransferProgress rp;
    RangeSet received(0);
    auto got = receive_parallel(socks, unechoed_plan(dst), received, rp);
    sender.join();
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_TRUE(quiet_before_end);
    EXPECT_EQ(rp.blocks_resent.load(), 1u);
    EXPECT_EQ(asked, resend_request(0, 65536));
    EXPECT_EQ(echo, eod_frame(data.size()));
    EXPECT_EQ(dst.read_all(), data);
}

// The sending side: a file of one block on a kept connection ends with the
// unechoed EOD frame and returns without waiting; a larger one still waits
// for the echo.
TEST(UnechoedEnd, TheSenderWaitsForNoEchoAfterOneBlockOnly) {
    for (std::size_t size : {std::size_t{30000}, std::size_t{65536 + 1}}) {
        std::string data = random_bytes(size, 25);
        TempFile src(data);
        auto pairs = tcp_pairs(1);
        std::vector<int> socks{pairs[0].first.get()};
        const int peer = pairs[0].second.get();
        ParallelSendPlan plan{src.fd.get(), 0, size, 65536};
        plan.end = ConnectionEnd::keep_open;
        plan.unechoed_if_one_block = true;
        TransferProgress sp;
        std::thread echoer;
        if (size > 65536) {
            echoer = std::thread([&] {
                // Reads every frame up to the EOD, then echoes it.
                std::string header(ftp::kFrameHeaderSize, '\0');
                for (;;) {
                    ASSERT_EQ(::recv(peer, header.data(), header.size(), MSG_WAITALL), (ssize_t)header.size());
                    auto h = ftp::decode_frame(reinterpret_cast<const uint8_t *>(header.data()), 1 << 20, 1ull << 40);
                    ASSERT_TRUE(h);
                    if (h->descriptor != ftp::kFrameData) {
                        EXPECT_EQ(h->descriptor, ftp::kFrameEod);
                        send_raw(peer, eod_frame(size));
                        return;
                    }
                    std::string body(h->count + kBlockTrailerBytes, '\0');
                    ASSERT_EQ(::recv(peer, body.data(), body.size(), MSG_WAITALL), (ssize_t)body.size());
                }
            });
        }
        auto sent = send_parallel(socks, plan, sp);
        if (echoer.joinable()) echoer.join();
        ASSERT_TRUE(sent) << sent.error().message;
        if (size <= 65536) {
            std::string frame(ftp::kFrameHeaderSize + size + kBlockTrailerBytes, '\0');
            ASSERT_EQ(::recv(peer, frame.data(), frame.size(), MSG_WAITALL), (ssize_t)frame.size());
            std::string end(ftp::kFrameHeaderSize, '\0');
            ASSERT_EQ(::recv(peer, end.data(), end.size(), MSG_WAITALL), (ssize_t)end.size());
            EXPECT_EQ(end, unechoed_eod_frame(size));
        }
    }
}
