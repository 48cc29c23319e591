// The RDMA control-message codec (protocol/rdma_message.*) and the rdma_cm
// connection private data (protocol/rdma_connect.*): every message type
// round-trips, and decode() refuses each kind of malformed input on its own.
// Malformed inputs are built by encoding a valid message and changing bytes at
// the offsets rdma_message.cpp uses (header: magic 0, version 2, type 3,
// length 4, credits 6, file_id 8, reserved 12; bodies from 16; big-endian).
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "protocol/big_endian.h"
#include "protocol/rdma_connect.h"
#include "protocol/rdma_message.h"

using namespace rftp::wire;

namespace {

// One encoded message in a receive-sized buffer; len is what "arrived".
struct Wire {
    std::array<uint8_t, kRdmaMaxMessage> buf{};
    std::size_t len = 0;

    std::span<const uint8_t> bytes() const { return {buf.data(), len}; }
    // Changes how many bytes arrive and makes the header agree, so that only
    // the type's own length rule can object.
    void resize(std::size_t n) {
        len = n;
        put_be<uint16_t>(buf.data() + 4, static_cast<uint16_t>(n));
    }
};

Wire enc(const RdmaMessage &m) {
    Wire w;
    w.len = encode(m, w.buf);
    return w;
}

// Expects decode to fail with a message that contains `needle`.
void expect_rejected(const Wire &w, const std::string &needle) {
    auto r = decode(w.bytes());
    ASSERT_FALSE(r) << "accepted, wanted an error containing \"" << needle << "\"";
    EXPECT_NE(r.error().message.find("malformed RDMA control message"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(needle), std::string::npos)
        << "error \"" << r.error().message << "\" does not mention \"" << needle << "\"";
}

RdmaMessage credit_msg() {
    RdmaMessage m;
    m.type = RdmaMessageType::credit;
    m.credits = 7;
    m.file_id = 0;
    return m;
}

RdmaMessage file_begin_msg(uint64_t start = 4096, uint64_t size = (1ull << 40) + 3) {
    RdmaMessage m;
    m.type = RdmaMessageType::file_begin;
    m.credits = 1;
    m.file_id = 42;
    m.start = start;
    m.size = size;
    return m;
}

Grant grant_entry(std::size_t i) {
    Grant g;
    g.slot = static_cast<uint32_t>(0x80000000u + i);
    g.length = static_cast<uint32_t>(0x00400000u + i);
    g.offset = 0x0123456789abcdefull + i * 0x1000000ull;
    g.addr = 0xfedcba9876543210ull - i * 0x10000ull;
    g.rkey = static_cast<uint32_t>(0xa5a5a5a5u ^ i);
    return g;
}

RdmaMessage grant_msg(std::size_t count) {
    RdmaMessage m;
    m.type = RdmaMessageType::grant;
    m.credits = 31;
    m.file_id = 0xfffffffeu;
    m.grant_count = static_cast<uint16_t>(count);
    for (std::size_t i = 0; i < count && i < kMaxGrantsPerMessage; ++i) m.grants[i] = grant_entry(i);
    return m;
}

RdmaMessage block_done_msg() {
    RdmaMessage m;
    m.type = RdmaMessageType::block_done;
    m.file_id = 9;
    m.slot = 0xdeadbeefu;
    m.length = 0x00100000u;
    return m;
}

RdmaMessage status_msg(RdmaMessageType type, int32_t status, std::string text) {
    RdmaMessage m;
    m.type = type;
    m.credits = 2;
    m.file_id = 5;
    m.status = status;
    m.bytes = 0x1122334455667788ull;
    m.text = std::move(text);
    return m;
}

// Offsets inside a grant message.
constexpr std::size_t kGrantCount = 16;
constexpr std::size_t kGrantEntries = kRdmaHeaderSize + kGrantBodyHeader;  // 24
constexpr std::size_t entry_at(std::size_t i) { return kGrantEntries + i * kGrantEntrySize; }
// Offsets inside a file_done / abort message.
constexpr std::size_t kStatusAt = 16;
constexpr std::size_t kStatusReserved = 20;
constexpr std::size_t kTextLen = 32;
constexpr std::size_t kTextAt = 34;

}  // namespace

// ---- round trips ---------------------------------------------------------------

TEST(RdmaMessageRoundTrip, Credit) {
    RdmaMessage m = credit_msg();
    m.credits = 0xffff;
    m.file_id = 0x89abcdefu;
    Wire w = enc(m);
    ASSERT_EQ(w.len, kRdmaHeaderSize);
    // The header, byte by byte: magic "RF", version, type, length, credits, file_id, reserved.
    EXPECT_EQ(w.buf[0], 0x52);
    EXPECT_EQ(w.buf[1], 0x46);
    EXPECT_EQ(w.buf[2], kRdmaVersion);
    EXPECT_EQ(w.buf[3], 1);
    EXPECT_EQ(get_be<uint16_t>(w.buf.data() + 4), kRdmaHeaderSize);
    EXPECT_EQ(get_be<uint16_t>(w.buf.data() + 6), 0xffff);
    EXPECT_EQ(get_be<uint32_t>(w.buf.data() + 8), 0x89abcdefu);
    EXPECT_EQ(get_be<uint32_t>(w.buf.data() + 12), 0u);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::credit);
    EXPECT_EQ(r->credits, 0xffff);
    EXPECT_EQ(r->file_id, 0x89abcdefu);
}

TEST(RdmaMessageRoundTrip, FileBegin) {
    Wire w = enc(file_begin_msg(4096, (1ull << 40) + 3));
    ASSERT_EQ(w.len, kRdmaHeaderSize + 16);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::file_begin);
    EXPECT_EQ(r->credits, 1);
    EXPECT_EQ(r->file_id, 42u);
    EXPECT_EQ(r->start, 4096u);
    EXPECT_EQ(r->size, (1ull << 40) + 3);
}

TEST(RdmaMessageRoundTrip, FileBeginEmptyRangeAndExtremes) {
    // start == size (nothing left to send) is legal; so is the full 64-bit range.
    for (auto [start, size] : {std::pair<uint64_t, uint64_t>{0, 0}, {77, 77}, {0, ~0ull}, {~0ull, ~0ull}}) {
        auto r = decode(enc(file_begin_msg(start, size)).bytes());
        ASSERT_TRUE(r) << start << " " << size << ": " << r.error().message;
        EXPECT_EQ(r->start, start);
        EXPECT_EQ(r->size, size);
    }
}

TEST(RdmaMessageRoundTrip, GrantWithOneEntry) {
    Wire w = enc(grant_msg(1));
    ASSERT_EQ(w.len, kRdmaHeaderSize + kGrantBodyHeader + kGrantEntrySize);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::grant);
    EXPECT_EQ(r->credits, 31);
    EXPECT_EQ(r->file_id, 0xfffffffeu);
    ASSERT_EQ(r->grant_count, 1);
    Grant want = grant_entry(0);
    EXPECT_EQ(r->grants[0].slot, want.slot);
    EXPECT_EQ(r->grants[0].length, want.length);
    EXPECT_EQ(r->grants[0].offset, want.offset);
    EXPECT_EQ(r->grants[0].addr, want.addr);
    EXPECT_EQ(r->grants[0].rkey, want.rkey);
}

TEST(RdmaMessageRoundTrip, GrantAheadCarriesAGrantsBody) {
    RdmaMessage m = grant_msg(3);
    m.type = RdmaMessageType::grant_ahead;
    Wire w = enc(m);
    ASSERT_EQ(w.len, kRdmaHeaderSize + kGrantBodyHeader + 3 * kGrantEntrySize);
    EXPECT_EQ(w.buf[3], 7);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::grant_ahead);
    ASSERT_EQ(r->grant_count, 3);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(r->grants[i].slot, grant_entry(i).slot);
        EXPECT_EQ(r->grants[i].offset, grant_entry(i).offset);
    }
    // As a grant's: at least one entry.
    m.grant_count = 0;
    Wire empty = enc(m);
    EXPECT_FALSE(decode(empty.bytes()));
}

TEST(RdmaMessageRoundTrip, GrantWithFifteenEntries) {
    static_assert(kMaxGrantsPerMessage == 15);
    Wire w = enc(grant_msg(15));
    ASSERT_EQ(w.len, kRdmaHeaderSize + kGrantBodyHeader + 15 * kGrantEntrySize);  // 504: a 16th would not fit in 512
    ASSERT_LE(w.len, kRdmaMaxMessage);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->grant_count, 15);
    for (std::size_t i = 0; i < 15; ++i) {
        Grant want = grant_entry(i);
        EXPECT_EQ(r->grants[i].slot, want.slot) << i;
        EXPECT_EQ(r->grants[i].length, want.length) << i;
        EXPECT_EQ(r->grants[i].offset, want.offset) << i;
        EXPECT_EQ(r->grants[i].addr, want.addr) << i;
        EXPECT_EQ(r->grants[i].rkey, want.rkey) << i;
    }
}

TEST(RdmaMessageRoundTrip, GrantEndingAtTheLastRepresentableOffset) {
    RdmaMessage m = grant_msg(1);
    m.grants[0].length = 10;
    m.grants[0].offset = ~0ull - 10;  // [2^64-11, 2^64-1): end fits in 64 bits
    auto r = decode(enc(m).bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->grants[0].offset, ~0ull - 10);
}

TEST(RdmaMessageRoundTrip, BlockDone) {
    Wire w = enc(block_done_msg());
    ASSERT_EQ(w.len, kRdmaHeaderSize + 8);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::block_done);
    EXPECT_EQ(r->file_id, 9u);
    EXPECT_EQ(r->slot, 0xdeadbeefu);
    EXPECT_EQ(r->length, 0x00100000u);
}

TEST(RdmaMessageRoundTrip, FileDone) {
    Wire w = enc(status_msg(RdmaMessageType::file_done, 0, ""));
    ASSERT_EQ(w.len, kTextAt);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::file_done);
    EXPECT_EQ(r->credits, 2);
    EXPECT_EQ(r->file_id, 5u);
    EXPECT_EQ(r->status, 0);
    EXPECT_EQ(r->bytes, 0x1122334455667788ull);
    EXPECT_EQ(r->text, "");
}

TEST(RdmaMessageRoundTrip, FileDoneWithNegativeErrnoAndText) {
    auto r = decode(enc(status_msg(RdmaMessageType::file_done, -28, "write /data/x: No space left on device")).bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, -28);
    EXPECT_EQ(r->text, "write /data/x: No space left on device");
}

TEST(RdmaMessageRoundTrip, AbortWithText) {
    const std::string text = "user pressed ^C ~ {all printable} 0x7e";
    Wire w = enc(status_msg(RdmaMessageType::abort, -125, text));
    ASSERT_EQ(w.len, kTextAt + text.size());
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->type, RdmaMessageType::abort);
    EXPECT_EQ(r->status, -125);
    EXPECT_EQ(r->bytes, 0x1122334455667788ull);
    EXPECT_EQ(r->text, text);
}

TEST(RdmaMessageRoundTrip, AbortWithLongestTextAndMostNegativeStatus) {
    std::string text(kMaxStatusText, 'x');
    Wire w = enc(status_msg(RdmaMessageType::abort, kMinStatus, text));
    ASSERT_EQ(w.len, kTextAt + kMaxStatusText);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, kMinStatus);
    EXPECT_EQ(r->text, text);
}

TEST(RdmaMessageEncode, CutsTextToTheLimit) {
    std::string text(kMaxStatusText + 100, 'a');
    text[kMaxStatusText - 1] = 'Z';
    Wire w = enc(status_msg(RdmaMessageType::abort, -1, text));
    EXPECT_EQ(w.len, kTextAt + kMaxStatusText);
    EXPECT_EQ(get_be<uint16_t>(w.buf.data() + kTextLen), kMaxStatusText);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->text, text.substr(0, kMaxStatusText));
    EXPECT_EQ(r->text.back(), 'Z');
}

TEST(RdmaMessageEncode, ReplacesControlBytesWithQuestionMarks) {
    std::string text = std::string("a\nb\tc") + '\0' + "d\x7f" "e\x80\xff" "f\x1f g";
    auto r = decode(enc(status_msg(RdmaMessageType::file_done, -5, text)).bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->text, "a?b?c?d?e??f? g");
}

TEST(RdmaMessageEncode, CutsAndSanitisesTogether) {
    std::string text(kMaxStatusText + 5, '\r');
    auto r = decode(enc(status_msg(RdmaMessageType::abort, -1, text)).bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->text, std::string(kMaxStatusText, '?'));
}

TEST(RdmaMessageEncode, GrantCountAboveTheLimitIsCutToFifteen) {
    RdmaMessage m = grant_msg(15);
    m.grant_count = 40;
    Wire w = enc(m);
    EXPECT_EQ(w.len, kRdmaHeaderSize + kGrantBodyHeader + 15 * kGrantEntrySize);
    EXPECT_EQ(get_be<uint16_t>(w.buf.data() + kGrantCount), 15);
    auto r = decode(w.bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->grant_count, 15);
}

TEST(RdmaMessageEncode, TypeNames) {
    EXPECT_STREQ(to_string(RdmaMessageType::credit), "credit");
    EXPECT_STREQ(to_string(RdmaMessageType::file_begin), "file_begin");
    EXPECT_STREQ(to_string(RdmaMessageType::grant), "grant");
    EXPECT_STREQ(to_string(RdmaMessageType::block_done), "block_done");
    EXPECT_STREQ(to_string(RdmaMessageType::file_done), "file_done");
    EXPECT_STREQ(to_string(RdmaMessageType::abort), "abort");
    EXPECT_STREQ(to_string(RdmaMessageType::grant_ahead), "grant_ahead");
    EXPECT_STREQ(to_string(static_cast<RdmaMessageType>(99)), "unknown");
}

// ---- header rejections -----------------------------------------------------------

TEST(RdmaMessageDecode, RejectsShorterThanAHeader) {
    Wire w = enc(credit_msg());
    w.len = 0;
    expect_rejected(w, "0 bytes, shorter than a header");
    w.len = kRdmaHeaderSize - 1;
    expect_rejected(w, "15 bytes, shorter than a header");
    // An empty span with no storage behind it at all.
    auto r = decode(std::span<const uint8_t>{});
    EXPECT_FALSE(r);
}

TEST(RdmaMessageDecode, RejectsLongerThanAnyMessage) {
    // A 15-entry grant plus trailing bytes, so that only the size is wrong.
    Wire full = enc(grant_msg(15));
    std::array<uint8_t, kRdmaMaxMessage + 1> big{};
    std::copy(full.buf.begin(), full.buf.end(), big.begin());
    put_be<uint16_t>(big.data() + 4, static_cast<uint16_t>(big.size()));  // the header even agrees
    auto r = decode(big);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("513 bytes, longer than any message"), std::string::npos) << r.error().message;
}

TEST(RdmaMessageDecode, RejectsWrongMagic) {
    for (std::size_t at : {0u, 1u}) {
        Wire w = enc(credit_msg());
        w.buf[at] ^= 0x01;
        expect_rejected(w, "wrong magic");
    }
    Wire w = enc(credit_msg());
    w.buf[0] ^= 0xff;  // what Channel's malformed_next_ test hook does
    expect_rejected(w, "wrong magic");
}

TEST(RdmaMessageDecode, RejectsWrongVersionAndSaysWhich) {
    Wire w = enc(credit_msg());
    w.buf[2] = 2;
    expect_rejected(w, "version 2");
    expect_rejected(w, "speaks 1");
    w.buf[2] = 0;
    expect_rejected(w, "version 0");
    w.buf[2] = 255;
    expect_rejected(w, "version 255");
}

TEST(RdmaMessageDecode, RejectsHeaderLengthThatDisagreesWithBytesReceived) {
    Wire w = enc(block_done_msg());  // 24 bytes
    put_be<uint16_t>(w.buf.data() + 4, 23);
    expect_rejected(w, "header says 23 bytes, 24 arrived");
    put_be<uint16_t>(w.buf.data() + 4, 25);
    expect_rejected(w, "header says 25 bytes, 24 arrived");
    // The header is right but fewer bytes arrived (a truncated receive).
    Wire t = enc(block_done_msg());
    t.len = 20;
    expect_rejected(t, "header says 24 bytes, 20 arrived");
    // Header says a huge length.
    Wire h = enc(credit_msg());
    put_be<uint16_t>(h.buf.data() + 4, 0xffff);
    expect_rejected(h, "header says 65535 bytes, 16 arrived");
}

TEST(RdmaMessageDecode, RejectsNonzeroReservedHeaderField) {
    for (std::size_t at = 12; at < 16; ++at) {
        Wire w = enc(file_begin_msg());
        w.buf[at] = 0x01;
        expect_rejected(w, "reserved header field is not zero");
    }
}

TEST(RdmaMessageDecode, RejectsUnknownType) {
    for (uint8_t type : {uint8_t{0}, uint8_t{8}, uint8_t{0x80}, uint8_t{255}}) {
        Wire w = enc(credit_msg());
        w.buf[3] = type;
        expect_rejected(w, "unknown type " + std::to_string(type));
    }
}

// ---- each type at the wrong length --------------------------------------------------

TEST(RdmaMessageDecode, RejectsCreditWithABody) {
    Wire w = enc(credit_msg());
    w.resize(kRdmaHeaderSize + 1);
    expect_rejected(w, "credit of 17 bytes, expected 16");
    w.resize(kRdmaHeaderSize + 8);
    expect_rejected(w, "credit of 24 bytes, expected 16");
}

TEST(RdmaMessageDecode, RejectsFileBeginOfWrongLength) {
    Wire w = enc(file_begin_msg());
    w.resize(31);
    expect_rejected(w, "file_begin of 31 bytes, expected 32");
    w.resize(33);
    expect_rejected(w, "file_begin of 33 bytes, expected 32");
    w.resize(kRdmaHeaderSize);
    expect_rejected(w, "file_begin of 16 bytes, expected 32");
}

TEST(RdmaMessageDecode, RejectsBlockDoneOfWrongLength) {
    Wire w = enc(block_done_msg());
    w.resize(23);
    expect_rejected(w, "block_done of 23 bytes, expected 24");
    w.resize(25);
    expect_rejected(w, "block_done of 25 bytes, expected 24");
    w.resize(kRdmaHeaderSize);
    expect_rejected(w, "block_done of 16 bytes, expected 24");
}

TEST(RdmaMessageDecode, RejectsGrantWithoutItsCount) {
    Wire w = enc(grant_msg(1));
    w.resize(kRdmaHeaderSize);
    expect_rejected(w, "grant without its count");
    w.resize(kRdmaHeaderSize + kGrantBodyHeader - 1);
    expect_rejected(w, "grant without its count");
}

TEST(RdmaMessageDecode, RejectsGrantWhoseLengthDisagreesWithItsCount) {
    Wire w = enc(grant_msg(2));  // 88 bytes
    w.resize(87);
    expect_rejected(w, "grant of 87 bytes, expected 88");
    w.resize(89);
    expect_rejected(w, "grant of 89 bytes, expected 88");
    // Count says 1 but two entries arrived.
    Wire two = enc(grant_msg(2));
    put_be<uint16_t>(two.buf.data() + kGrantCount, 1);
    expect_rejected(two, "grant of 88 bytes, expected 56");
    // Count says 3 but two entries arrived.
    put_be<uint16_t>(two.buf.data() + kGrantCount, 3);
    expect_rejected(two, "grant of 88 bytes, expected 120");
    // A count and no entries at all.
    Wire none = enc(grant_msg(1));
    none.resize(kRdmaHeaderSize + kGrantBodyHeader);
    expect_rejected(none, "grant of 24 bytes, expected 56");
}

TEST(RdmaMessageDecode, RejectsStatusMessageWithoutItsTextLength) {
    for (auto type : {RdmaMessageType::file_done, RdmaMessageType::abort}) {
        Wire w = enc(status_msg(type, 0, ""));
        w.resize(kTextAt - 1);
        expect_rejected(w, "status message without its text length");
        w.resize(kRdmaHeaderSize);
        expect_rejected(w, "status message without its text length");
    }
}

TEST(RdmaMessageDecode, RejectsStatusMessageWhoseLengthDisagreesWithItsText) {
    Wire w = enc(status_msg(RdmaMessageType::file_done, 0, "abcde"));  // 39 bytes
    w.resize(38);
    expect_rejected(w, "file_done of 38 bytes, expected 39");
    w.resize(40);
    expect_rejected(w, "file_done of 40 bytes, expected 39");
    Wire a = enc(status_msg(RdmaMessageType::abort, -1, "abcde"));
    put_be<uint16_t>(a.buf.data() + kTextLen, 4);
    expect_rejected(a, "abort of 39 bytes, expected 38");
    put_be<uint16_t>(a.buf.data() + kTextLen, 6);
    expect_rejected(a, "abort of 39 bytes, expected 40");
}

// ---- grant contents ---------------------------------------------------------------

TEST(RdmaMessageDecode, RejectsGrantCountZero) {
    Wire w = enc(grant_msg(1));
    put_be<uint16_t>(w.buf.data() + kGrantCount, 0);
    expect_rejected(w, "grant of 0 blocks, expected 1..15");
    w.resize(kRdmaHeaderSize + kGrantBodyHeader);  // consistent length for zero entries
    expect_rejected(w, "grant of 0 blocks, expected 1..15");
}

TEST(RdmaMessageDecode, RejectsGrantCountSixteen) {
    // Sixteen entries cannot fit in 512 bytes, so the count is refused on its own.
    Wire w = enc(grant_msg(15));
    put_be<uint16_t>(w.buf.data() + kGrantCount, 16);
    expect_rejected(w, "grant of 16 blocks, expected 1..15");
    put_be<uint16_t>(w.buf.data() + kGrantCount, 0xffff);
    expect_rejected(w, "grant of 65535 blocks, expected 1..15");
}

TEST(RdmaMessageDecode, RejectsGrantEntryOfLengthZero) {
    Wire w = enc(grant_msg(3));
    put_be<uint32_t>(w.buf.data() + entry_at(1) + 4, 0);
    expect_rejected(w, "grant of an empty block");
    Wire last = enc(grant_msg(15));
    put_be<uint32_t>(last.buf.data() + entry_at(14) + 4, 0);
    expect_rejected(last, "grant of an empty block");
}

TEST(RdmaMessageDecode, RejectsGrantRangeWrappingPast2To64) {
    Wire w = enc(grant_msg(2));
    put_be<uint64_t>(w.buf.data() + entry_at(1) + 8, ~0ull);  // offset 2^64-1
    put_be<uint32_t>(w.buf.data() + entry_at(1) + 4, 2);      // length 2
    expect_rejected(w, "grant range wraps around");
    put_be<uint64_t>(w.buf.data() + entry_at(1) + 8, ~0ull - 0xfffffffeull);
    put_be<uint32_t>(w.buf.data() + entry_at(1) + 4, 0xffffffffu);
    expect_rejected(w, "grant range wraps around");
    // Ending exactly at 2^64: the end is not representable, so it is refused too.
    put_be<uint64_t>(w.buf.data() + entry_at(1) + 8, 0ull - 4096);
    put_be<uint32_t>(w.buf.data() + entry_at(1) + 4, 4096);
    expect_rejected(w, "grant range wraps around");
}

TEST(RdmaMessageDecode, RejectsNonzeroReservedGrantFields) {
    // Body header: count at 16..17, reserved 18..23.
    for (std::size_t at = 18; at < 24; ++at) {
        Wire w = enc(grant_msg(2));
        w.buf[at] = 0x40;
        expect_rejected(w, "reserved grant field is not zero");
    }
    // Each entry's last four bytes.
    for (std::size_t entry : {0u, 1u}) {
        for (std::size_t at = 28; at < 32; ++at) {
            Wire w = enc(grant_msg(2));
            w.buf[entry_at(entry) + at] = 0x01;
            expect_rejected(w, "reserved grant entry field is not zero");
        }
    }
}

// ---- file_begin and status contents ----------------------------------------------------

TEST(RdmaMessageDecode, RejectsFileBeginWithStartBeyondSize) {
    expect_rejected(enc(file_begin_msg(101, 100)), "file_begin with start beyond size");
    expect_rejected(enc(file_begin_msg(~0ull, 0)), "file_begin with start beyond size");
    expect_rejected(enc(file_begin_msg(1, 0)), "file_begin with start beyond size");
}

TEST(RdmaMessageDecode, RejectsNonzeroReservedStatusField) {
    for (std::size_t at = kStatusReserved; at < kStatusReserved + 4; ++at) {
        Wire w = enc(status_msg(RdmaMessageType::file_done, 0, "ok"));
        w.buf[at] = 0x01;
        expect_rejected(w, "reserved status field is not zero");
    }
}

TEST(RdmaMessageDecode, RejectsControlByteInStatusText) {
    for (uint8_t bad : {uint8_t{0x00}, uint8_t{0x0a}, uint8_t{0x1b}, uint8_t{0x1f}, uint8_t{0x7f}, uint8_t{0x80},
                        uint8_t{0xff}}) {
        for (auto type : {RdmaMessageType::file_done, RdmaMessageType::abort}) {
            Wire w = enc(status_msg(type, -5, "abcdef"));
            w.buf[kTextAt + 3] = bad;
            expect_rejected(w, "control byte in status text");
        }
    }
    // The first and last byte of the text are checked too.
    Wire first = enc(status_msg(RdmaMessageType::abort, -5, "abcdef"));
    first.buf[kTextAt] = '\n';
    expect_rejected(first, "control byte in status text");
    Wire last = enc(status_msg(RdmaMessageType::abort, -5, "abcdef"));
    last.buf[kTextAt + 5] = '\n';
    expect_rejected(last, "control byte in status text");
}

TEST(RdmaMessageDecode, RejectsStatusTextLongerThanTheLimit) {
    Wire w = enc(status_msg(RdmaMessageType::abort, -5, std::string(kMaxStatusText, 'y')));
    w.buf[kTextAt + kMaxStatusText] = 'y';
    put_be<uint16_t>(w.buf.data() + kTextLen, kMaxStatusText + 1);
    w.resize(kTextAt + kMaxStatusText + 1);  // consistent in every other way
    expect_rejected(w, "status text longer than 200");
    // A text length that could not fit even in the buffer.
    put_be<uint16_t>(w.buf.data() + kTextLen, 0xffff);
    expect_rejected(w, "status text longer than 200");
}

TEST(RdmaMessageDecode, RejectsPositiveStatus) {
    for (int32_t status : {1, 28, std::numeric_limits<int32_t>::max()}) {
        for (auto type : {RdmaMessageType::file_done, RdmaMessageType::abort}) {
            Wire w = enc(status_msg(type, status, "hm"));
            EXPECT_EQ(get_be<uint32_t>(w.buf.data() + kStatusAt), static_cast<uint32_t>(status));
            expect_rejected(w, "is not 0 or a negative errno");
        }
    }
}

// Below -4095 is no errno; INT32_MIN would overflow where the engine negates it.
TEST(RdmaMessageDecode, RejectsStatusBelowAnyErrno) {
    for (int32_t status : {kMinStatus - 1, std::numeric_limits<int32_t>::min()}) {
        for (auto type : {RdmaMessageType::file_done, RdmaMessageType::abort}) {
            Wire w = enc(status_msg(type, status, "hm"));
            expect_rejected(w, "is not 0 or a negative errno");
        }
    }
}

// ---- connection private data ------------------------------------------------------------

namespace {

ChannelToken sample_token() {
    ChannelToken t{};
    for (std::size_t i = 0; i < kTokenSize; ++i) t[i] = static_cast<uint8_t>(0x0f + i * 0x11);
    return t;
}

void expect_connect_rejected(std::span<const uint8_t> bytes, const std::string &needle) {
    auto r = decode_connect(bytes);
    ASSERT_FALSE(r) << "accepted, wanted an error containing \"" << needle << "\"";
    EXPECT_NE(r.error().message.find(needle), std::string::npos)
        << "error \"" << r.error().message << "\" does not mention \"" << needle << "\"";
}

TEST(RdmaMessage, AnAbortCarriesOnlyAnErrnoItsPeerAccepts) {
    EXPECT_EQ(abort_status(-ENOSPC), -ENOSPC);
    EXPECT_EQ(abort_status(kMinStatus), kMinStatus);
    // rftp's own codes, and a plain failure's -1 (EPERM), go as EIO.
    EXPECT_EQ(abort_status(rftp::kFileChanged), -EIO);
    EXPECT_EQ(abort_status(kMinStatus - 1), -EIO);
    EXPECT_EQ(abort_status(-1), -EIO);
    EXPECT_EQ(abort_status(0), -EIO);
    // And what goes out decodes on the other side.
    RdmaMessage m;
    m.type = RdmaMessageType::abort;
    m.status = abort_status(rftp::kFileChanged);
    m.text = "the file ended at byte 10";
    auto r = decode(enc(m).bytes());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, -EIO);
}

}  // namespace

TEST(RdmaMessageConnect, RoundTrip) {
    ConnectData d;
    d.index = 3;
    d.count = 5;
    d.token = sample_token();
    auto bytes = encode_connect(d);
    static_assert(std::tuple_size_v<decltype(bytes)> == kConnectDataSize);
    EXPECT_EQ(bytes[0], 0x52);  // "RC"
    EXPECT_EQ(bytes[1], 0x43);
    EXPECT_EQ(bytes[2], kRdmaVersion);
    EXPECT_EQ(bytes[3], 3);
    EXPECT_EQ(bytes[4], 5);
    auto r = decode_connect(bytes);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->index, 3);
    EXPECT_EQ(r->count, 5);
    EXPECT_EQ(r->token, d.token);
}

TEST(RdmaMessageConnect, BoundaryIndexAndCountAccepted) {
    for (auto [index, count] : {std::pair<uint8_t, uint8_t>{0, 2}, {1, 2}, {0, 255}, {254, 255}}) {
        ConnectData d;
        d.index = index;
        d.count = count;
        auto r = decode_connect(encode_connect(d));
        ASSERT_TRUE(r) << int(index) << "/" << int(count) << ": " << r.error().message;
        EXPECT_EQ(r->index, index);
        EXPECT_EQ(r->count, count);
    }
}

TEST(RdmaMessageConnect, RejectsTooShortPrivateData) {
    ConnectData d{0, 2, sample_token()};
    auto bytes = encode_connect(d);
    expect_connect_rejected(std::span<const uint8_t>(bytes).first(kConnectDataSize - 1), "without rftp private data");
    expect_connect_rejected(std::span<const uint8_t>{}, "without rftp private data");
}

TEST(RdmaMessageConnect, RejectsForeignMagic) {
    auto bytes = encode_connect(ConnectData{0, 2, sample_token()});
    bytes[0] = 0x52;
    bytes[1] = 0x46;  // the message magic "RF" is not the connect magic "RC"
    expect_connect_rejected(bytes, "foreign private data");
    std::array<uint8_t, 56> zeros{};  // a peer that sends no private data of ours at all
    expect_connect_rejected(zeros, "foreign private data");
}

TEST(RdmaMessageConnect, RejectsWrongVersionAndSaysWhich) {
    auto bytes = encode_connect(ConnectData{0, 2, sample_token()});
    bytes[2] = 2;
    expect_connect_rejected(bytes, "protocol version 2");
    expect_connect_rejected(bytes, "speaks 1");
    bytes[2] = 0;
    expect_connect_rejected(bytes, "protocol version 0");
}

TEST(RdmaMessageConnect, RejectsIndexNotBelowCount) {
    for (auto [index, count] : {std::pair<uint8_t, uint8_t>{2, 2}, {5, 4}, {255, 255}, {255, 2}}) {
        auto bytes = encode_connect(ConnectData{index, count, sample_token()});
        expect_connect_rejected(bytes, "index out of range");
    }
}

TEST(RdmaMessageConnect, RejectsCountBelowTwo) {
    // A channel has the control queue pair and at least one data queue pair.
    for (auto [index, count] : {std::pair<uint8_t, uint8_t>{0, 1}, {0, 0}}) {
        auto bytes = encode_connect(ConnectData{index, count, sample_token()});
        expect_connect_rejected(bytes, "index out of range");
    }
}

TEST(RdmaMessageConnect, RejectsReservedBytesSet) {
    for (std::size_t i : {5u, 6u, 7u}) {
        auto bytes = encode_connect(ConnectData{0, 2, sample_token()});
        bytes[i] = 1;
        expect_connect_rejected(bytes, "reserved bytes set");
    }
}

TEST(RdmaMessageConnect, AcceptsPaddingBeyondTwentyFourBytes) {
    ConnectData d{2, 3, sample_token()};
    auto bytes = encode_connect(d);
    std::array<uint8_t, 56> padded{};  // InfiniBand/RoCE REQ private data is 56 bytes
    padded.fill(0xee);                  // whatever the padding holds, it is ignored
    std::copy(bytes.begin(), bytes.end(), padded.begin());
    auto r = decode_connect(padded);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->index, 2);
    EXPECT_EQ(r->count, 3);
    EXPECT_EQ(r->token, d.token);
    // Exactly 24 bytes and one byte of padding work as well.
    std::array<uint8_t, 25> one_more{};
    std::copy(bytes.begin(), bytes.end(), one_more.begin());
    EXPECT_TRUE(decode_connect(one_more));
}

TEST(RdmaMessageConnect, TokenHexRoundTrip) {
    ChannelToken t = sample_token();
    std::string hex = token_hex(t);
    EXPECT_EQ(hex, "0f2031425364758697a8b9cadbecfd0e");
    auto back = parse_token_hex(hex);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, t);

    ChannelToken zero{};
    EXPECT_EQ(token_hex(zero), std::string(32, '0'));
    ChannelToken ones;
    ones.fill(0xff);
    EXPECT_EQ(token_hex(ones), std::string(32, 'f'));
    ASSERT_TRUE(parse_token_hex(std::string(32, 'F')));
    EXPECT_EQ(*parse_token_hex(std::string(32, 'F')), ones);  // upper case is accepted
    EXPECT_EQ(*parse_token_hex("0F2031425364758697A8B9CADBECFD0E"), t);
}

TEST(RdmaMessageConnect, ParseTokenHexRejectsWrongLength) {
    std::string hex = token_hex(sample_token());
    for (std::size_t n : {0u, 1u, 30u, 31u}) {
        auto r = parse_token_hex(hex.substr(0, n));
        ASSERT_FALSE(r) << n;
        EXPECT_NE(r.error().message.find("32 hex digits"), std::string::npos) << r.error().message;
    }
    EXPECT_FALSE(parse_token_hex(hex + "0"));
    EXPECT_FALSE(parse_token_hex(hex + hex));
}

TEST(RdmaMessageConnect, ParseTokenHexRejectsNonHexCharacter) {
    std::string hex = token_hex(sample_token());
    for (std::size_t at : {0u, 1u, 17u, 31u}) {
        for (char c : {'g', 'G', ' ', '-', 'x', '\0', '/', ':', '@', '`'}) {
            std::string bad = hex;
            bad[at] = c;
            auto r = parse_token_hex(bad);
            ASSERT_FALSE(r) << "position " << at << " char " << int(c);
            EXPECT_NE(r.error().message.find("not a hex digit"), std::string::npos) << r.error().message;
        }
    }
    EXPECT_FALSE(parse_token_hex("0x" + hex.substr(2)));
}
