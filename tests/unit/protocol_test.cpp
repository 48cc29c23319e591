#include <gtest/gtest.h>

#include "protocol/block_frame.h"
#include "protocol/checksum_failure.h"
#include "protocol/data_token.h"
#include "protocol/ftp_command.h"
#include "protocol/ftp_reply.h"
#include "protocol/host_port.h"
#include "protocol/telnet_filter.h"

using namespace rftp::ftp;

TEST(ParseCommand, SplitsVerbAndArgumentAndUppercases) {
    auto c = parse_command("retr some file.bin");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->verb, "RETR");
    EXPECT_EQ(c->argument, "some file.bin");
}

TEST(ParseCommand, RejectsBadVerbsAndControlBytes) {
    EXPECT_FALSE(parse_command(""));
    EXPECT_FALSE(parse_command("RETRX a"));
    EXPECT_FALSE(parse_command("R3TR a"));
    EXPECT_FALSE(parse_command(std::string("RETR a\0b", 8)));
    for (char c : {'\t', '\x1b', '\x07', '\x7f', '\x01'})
        EXPECT_FALSE(parse_command(std::string("MKD a") + c + "b")) << static_cast<int>(c);
    auto utf8 = parse_command("MKD caf\xc3\xa9");  // bytes from 0x80 up are UTF-8, not control
    ASSERT_TRUE(utf8);
    EXPECT_EQ(utf8->argument, "caf\xc3\xa9");
    EXPECT_FALSE(parse_command(std::string(kMaxCommandLine, 'A')));
}

TEST(LineReader, SplitsCrLfAndBareLfAcrossFeeds) {
    LineReader r;
    std::string line;
    r.feed("USER al");
    EXPECT_EQ(r.next(line), LineReader::Next::need_more);
    r.feed("ice\r\nNOOP\nPA");
    ASSERT_EQ(r.next(line), LineReader::Next::line);
    EXPECT_EQ(line, "USER alice");
    ASSERT_EQ(r.next(line), LineReader::Next::line);
    EXPECT_EQ(line, "NOOP");
    EXPECT_EQ(r.next(line), LineReader::Next::need_more);
}

TEST(LineReader, ReportsOverlongOnceThenResynchronises) {
    LineReader r;
    std::string line;
    r.feed(std::string(kMaxCommandLine + 10, 'x'));
    EXPECT_EQ(r.next(line), LineReader::Next::overlong);
    r.feed(std::string(5000, 'y'));
    EXPECT_EQ(r.next(line), LineReader::Next::need_more);
    r.feed("zz\r\nNOOP\r\n");
    ASSERT_EQ(r.next(line), LineReader::Next::line);
    EXPECT_EQ(line, "NOOP");
}

TEST(Reply, FormatsAndReassemblesMultiLine) {
    std::string wire = format_reply(211, "Features:\n MDTM\n200 tricky\nEnd");
    ReplyAssembler a;
    Reply out;
    std::size_t start = 0;
    ReplyAssembler::State st = ReplyAssembler::State::need_more;
    while (start < wire.size()) {
        std::size_t end = wire.find("\r\n", start);
        st = a.add_line(std::string_view(wire).substr(start, end - start), out);
        start = end + 2;
    }
    ASSERT_EQ(st, ReplyAssembler::State::complete);
    EXPECT_EQ(out.code, 211);
    ASSERT_EQ(out.lines.size(), 4u);
    EXPECT_EQ(out.lines[2], " 200 tricky");
    EXPECT_EQ(format_reply(200, "OK"), "200 OK\r\n");
}

TEST(HostPort, PortAndPasvRoundTrip) {
    auto ep = parse_port_argument("127,0,0,1,195,80");
    ASSERT_TRUE(ep);
    EXPECT_EQ(ep->host, "127.0.0.1");
    EXPECT_EQ(ep->port, 195 * 256 + 80);
    auto back = parse_pasv_reply(format_pasv_text(*ep));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->port, ep->port);
    EXPECT_FALSE(parse_port_argument("127,0,0,1,256,1"));
    EXPECT_FALSE(parse_port_argument("127,0,0,1,1"));
    EXPECT_FALSE(parse_port_argument("a,b,c,d,e,f"));
}

TEST(HostPort, EprtAndEpsv) {
    auto ep = parse_eprt_argument("|2|::1|5282|");
    ASSERT_TRUE(ep);
    EXPECT_EQ(ep->host, "::1");
    EXPECT_EQ(ep->port, 5282);
    EXPECT_FALSE(parse_eprt_argument("|1|::1|5282|"));
    EXPECT_FALSE(parse_eprt_argument("|3|1.2.3.4|5282|"));
    EXPECT_FALSE(parse_eprt_argument("|1|1.2.3.4|0|"));
    auto port = parse_epsv_reply(format_epsv_text(40000));
    ASSERT_TRUE(port);
    EXPECT_EQ(*port, 40000);
    EXPECT_FALSE(parse_epsv_reply("Entering Extended Passive Mode (|||99999|)"));
}

// What comes back from the receiver: a resend request for a range a block of
// the transfer could have, or the echoed EOD; nothing else.
TEST(BlockFrame, ReceiverFramesRoundTripAndBounds) {
    auto asked = encode_frame({kFrameResend, 4096, 8192});
    auto h = decode_receiver_frame(asked.data(), 4096, 1ull << 20);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->descriptor, kFrameResend);
    EXPECT_EQ(h->count, 4096u);
    EXPECT_EQ(h->offset, 8192u);
    EXPECT_FALSE(decode_receiver_frame(asked.data(), 1024, 1ull << 20));  // longer than a block
    EXPECT_FALSE(decode_receiver_frame(asked.data(), 4096, 10000));       // past the file
    auto data = encode_frame({kFrameData, 4096, 8192});
    EXPECT_FALSE(decode_receiver_frame(data.data(), 4096, 1ull << 20));   // data goes the other way
    auto empty = encode_frame({kFrameResend, 0, 8192});
    EXPECT_FALSE(decode_receiver_frame(empty.data(), 4096, 1ull << 20));
    auto echo = encode_frame({kFrameEod, 0, 8192});
    auto end = decode_receiver_frame(echo.data(), 4096, 1ull << 20);
    ASSERT_TRUE(end);
    EXPECT_EQ(end->descriptor, kFrameEod);
    EXPECT_EQ(end->offset, 8192u);
    auto heavy = encode_frame({kFrameEod, 1, 8192});
    EXPECT_FALSE(decode_receiver_frame(heavy.data(), 4096, 1ull << 20));  // an EOD carries nothing
    // ... and the sender's frames never carry a resend request.
    EXPECT_FALSE(decode_frame(asked.data(), 4096, 1ull << 20));
}

TEST(BlockFrame, RoundTripAndBounds) {
    auto bytes = encode_frame({kFrameData, 4096, 1ull << 40});
    auto h = decode_frame(bytes.data(), 8192, 1ull << 62);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->count, 4096u);
    EXPECT_EQ(h->offset, 1ull << 40);
    EXPECT_FALSE(decode_frame(bytes.data(), 1024, 1ull << 62));          // too long
    EXPECT_FALSE(decode_frame(bytes.data(), 8192, 1ull << 40));          // past limit
    auto zero = encode_frame({kFrameData, 0, 0});
    EXPECT_FALSE(decode_frame(zero.data(), 8192, 1ull << 62));
    auto eod_with_data = encode_frame({kFrameEod, 5, 0});
    EXPECT_FALSE(decode_frame(eod_with_data.data(), 8192, 1ull << 62));
    auto bad = encode_frame({0x41, 5, 0});
    EXPECT_FALSE(decode_frame(bad.data(), 8192, 1ull << 62));
    auto wrap = encode_frame({kFrameData, 100, ~0ull - 10});
    EXPECT_FALSE(decode_frame(wrap.data(), 8192, ~0ull));
}

TEST(TelnetFilter, DropsSynchAndOptionsKeepsDoubledIacAndLoneIacData) {
    TelnetFilter f;
    std::string out;
    f.filter("\xff\xf4\xff\xf2" "AB", out);   // IAC IP IAC DM, as before ABOR
    f.filter("OR\r\n\xff\xfb\x01X", out);     // IAC WILL ECHO, split nowhere special
    f.filter("\xff", out);                    // IAC at a read boundary...
    f.filter("\xff" "Y", out);                // ...doubled: a literal 0xff
    f.filter("\xff" "ABOR", out);             // lone IAC (its DM went out of band)
    EXPECT_EQ(out, std::string("ABOR\r\nX\xffY") + "ABOR");
}

TEST(ChecksumFailure, TheSentenceNamesTheBlockAndHowOftenItFailed) {
    std::string once = checksum_failure_text(12582912, 4194304);
    EXPECT_NE(once.find("the block at byte 12582912 (4194304 bytes) failed its CRC32C check;"), std::string::npos)
        << once;
    EXPECT_NE(checksum_failure_text(0, 1, 4).find("failed its CRC32C check 4 times; giving up"), std::string::npos);
}

TEST(DataToken, TheHeaderIsTheMagicThenTheToken) {
    // docs/protocol.md, "Data connection token": 24 bytes, RFTPDAT1 and the 16 of the token.
    auto token = rftp::wire::parse_token_hex("0f2031425364758697a8b9cadbecfd0e");
    ASSERT_TRUE(token);
    auto header = rftp::wire::data_token_header(*token);
    ASSERT_EQ(header.size(), 24u);
    EXPECT_EQ(std::string(header.begin(), header.begin() + 8), "RFTPDAT1");
    EXPECT_TRUE(std::equal(header.begin() + 8, header.end(), token->begin()));
}
