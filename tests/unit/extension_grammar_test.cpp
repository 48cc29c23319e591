// rftpd's FTP extensions, formatted by one side and parsed by the other:
// each format is read back by its parse, and the parses refuse what the
// other side never sends.
#include <gtest/gtest.h>

#include "common/decimal.h"
#include "protocol/data_token.h"
#include "protocol/features.h"
#include "protocol/ftp_reply.h"
#include "protocol/parallel_option.h"
#include "protocol/partial_names.h"
#include "protocol/rdma_setup.h"

using namespace rftp::ftp;
using rftp::parse_decimal;

namespace {

// The text lines a client reads from the 211 reply rftpd sends.
std::vector<std::string> reply_lines(const std::string &text) {
    ReplyAssembler assembler;
    Reply reply;
    std::string wire = format_reply(211, text);
    std::size_t start = 0;
    while (start < wire.size()) {
        std::size_t end = wire.find("\r\n", start);
        if (assembler.add_line(wire.substr(start, end - start), reply) == ReplyAssembler::State::complete) break;
        start = end + 2;
    }
    EXPECT_EQ(reply.code, 211);
    return reply.lines;
}

Features rftpd_features(bool blocksum_on, bool rdma) {
    return {.eprt = true,
            .epsv = true,
            .pasv = true,
            .mdtm = true,
            .size = true,
            .rest_stream = true,
            .tvfs = true,
            .utf8 = true,
            .mlst = true,
            .mlst_facts = "type*;size*;modify*;",
            .mlsr = true,
            .login_ticket = true,
            .hash_sha256 = true,
            .blocksum_none = true,
            .blocksum_on = blocksum_on,
            .source_identity = true,
            .hold = true,
            .data_token = true,
            .data_keep = true,
            .data_keep_unechoed = true,
            .data_keep_tls = rdma,
            .parallel = true,
            .parallel_max = 16,
            .rdma = rdma,
            .rdma_max = rdma ? 8u : 1u,
            .rdma_ahead = rdma,
            .pipeline_max = 256};
}

rftp::wire::Token counting_token() {
    rftp::wire::Token t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<uint8_t>(i * 17);
    return t;
}

}  // namespace

TEST(Decimal, TakesDigitsUpToTheirLimitOnly) {
    EXPECT_EQ(parse_decimal("0"), 0u);
    EXPECT_EQ(parse_decimal("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(parse_decimal("65536", 65536), 65536u);
    EXPECT_FALSE(parse_decimal("65537", 65536));
    for (const char *bad : {"", "-1", "+1", " 1", "1 ", "1e3", "0x10", "18446744073709551616", "1a"})
        EXPECT_FALSE(parse_decimal(bad)) << bad;
}

TEST(FeaturesGrammar, RftpdsListReadsBackAsWritten) {
    for (bool blocksum_on : {true, false})
        for (bool rdma : {true, false}) {
            Features f = rftpd_features(blocksum_on, rdma);
            EXPECT_EQ(parse_features(reply_lines(format_features(f))), f) << blocksum_on << rdma;
        }
}

TEST(FeaturesGrammar, AnotherServersListIsReadWithoutRftpdsExtensions) {
    Features f = parse_features({"Features:", " MDTM", " size", " MLST type*;size*;", " REST STREAM", " UTF8", "End"});
    EXPECT_TRUE(f.mdtm && f.size && f.mlst && f.rest_stream && f.utf8);
    EXPECT_EQ(f.mlst_facts, "type*;size*;");
    EXPECT_FALSE(f.parallel || f.rdma || f.hold || f.data_token || f.mlsr || f.login_ticket || f.is_rftpd());
    EXPECT_EQ(f.pipeline_max, 0u);  // not said
}

TEST(FeaturesGrammar, KeptConnectionsUnderTlsAreAWordOfDatakeep) {
    Features both = parse_features({" DATAKEEP UNECHOED TLS"});
    EXPECT_TRUE(both.data_keep && both.data_keep_unechoed && both.data_keep_tls);
    Features tls = parse_features({" DATAKEEP TLS"});
    EXPECT_TRUE(tls.data_keep && tls.data_keep_tls && !tls.data_keep_unechoed);
    // A server that does not say TLS closes them under PROT P.
    Features plain = parse_features({" DATAKEEP UNECHOED"});
    EXPECT_TRUE(plain.data_keep_unechoed && !plain.data_keep_tls);
}

TEST(FeaturesGrammar, GrantsAheadAreAWordAfterTheRdmaCount) {
    // A client that reads only the count (before grants ahead) still reads it.
    Features f = parse_features({" RDMA 8 AHEAD"});
    EXPECT_TRUE(f.rdma && f.rdma_ahead);
    EXPECT_EQ(f.rdma_max, 8u);
    EXPECT_FALSE(parse_features({" RDMA 8"}).rdma_ahead);
    EXPECT_NE(format_features(rftpd_features(true, true)).find(" RDMA 8 AHEAD\n"), std::string::npos);
}

TEST(FeaturesGrammar, AStreamCountItCannotReadMeansOne) {
    Features f = parse_features({" PARALLEL lots", " RDMA 0", " PIPELINE -3"});
    EXPECT_TRUE(f.parallel && f.rdma);
    EXPECT_EQ(f.parallel_max, 1u);
    EXPECT_EQ(f.rdma_max, 1u);
    EXPECT_EQ(f.pipeline_max, 1u);
}

TEST(ParallelGrammar, RequestsReadBackAsWritten) {
    for (ParallelRequest r : {ParallelRequest{.streams = 4, .block_size = 1u << 20}, ParallelRequest{.streams = 0},
                              ParallelRequest{.streams = 1u << 20, .block_size = 1ull << 50}}) {
        std::string command = format_parallel_request(r);
        ASSERT_TRUE(command.starts_with("PARALLEL "));
        EXPECT_EQ(parse_parallel_request(command.substr(9)), r) << command;
    }
}

TEST(ParallelGrammar, AnyDecimalCountIsARequestTheServerCaps) {
    // docs/protocol.md: a larger n is capped to max_streams, not refused.
    auto r = parse_parallel_request("100000");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->streams, 100000u);
    EXPECT_FALSE(r->block_size);
    for (const char *bad : {"", "x", "-1", "4 x", "4 -5"}) EXPECT_FALSE(parse_parallel_request(bad)) << bad;
    EXPECT_EQ(parse_parallel_request("4 1048576 later"), (ParallelRequest{.streams = 4, .block_size = 1u << 20}));
}

TEST(ParallelGrammar, GrantsReadBackAsWritten) {
    ParallelGrant g{.streams = 8, .block_size = 8u << 20};
    EXPECT_EQ(format_parallel_grant(g), "PARALLEL 8 8388608");
    EXPECT_EQ(parse_parallel_grant(format_parallel_grant(g)), g);
    for (const char *bad : {"PARALLEL 0 65536", "PARALLEL 4 0", "PARALLEL 4", "SERIAL 4 65536", "PARALLEL x 65536"})
        EXPECT_FALSE(parse_parallel_grant(bad)) << bad;
}

TEST(RdmaGrammar, RequestsReadBackAsWritten) {
    RdmaRequest r{.streams = 4, .block_size = 1u << 20, .depth = 16};
    std::string command = format_rdma_request(r);
    EXPECT_EQ(command, "RADR 4 1048576 16");
    EXPECT_EQ(parse_rdma_request(command.substr(5)), r);
    EXPECT_TRUE(parse_rdma_request("100000 1099511627777 70000"));  // capped by the server, not refused
    for (const char *bad : {"", "4 1048576", "0 1048576 16", "4 0 16", "4 1048576 0", "4 1048576 16 1", "4 1M 16",
                            "4 1048576 16 AHEAD AHEAD", "4 1048576 16 BEHIND"})
        EXPECT_FALSE(parse_rdma_request(bad)) << bad;
    // AHEAD: the client takes grants ahead (docs/protocol.md, "Grants ahead").
    r.ahead = true;
    EXPECT_EQ(format_rdma_request(r), "RADR 4 1048576 16 AHEAD");
    EXPECT_EQ(parse_rdma_request("4 1048576 16 AHEAD"), r);
    EXPECT_EQ(parse_rdma_request("4 1048576 16 ahead"), r);
}

TEST(RdmaGrammar, GrantsReadBackAsWritten) {
    RdmaGrant g{.port = 18515, .streams = 4, .block_size = 1u << 20, .depth = 16, .token = counting_token()};
    std::string text = format_rdma_grant(g);
    EXPECT_EQ(text, "RADR port=18515 streams=4 block=1048576 depth=16 token=00112233445566778899aabbccddeeff");
    EXPECT_EQ(parse_rdma_grant(text), g);
    EXPECT_EQ(parse_rdma_grant("RADR token=00112233445566778899AABBCCDDEEFF depth=16 block=1048576 streams=4 "
                               "port=18515 later=1"),
              g);
}

TEST(RdmaGrammar, AGrantWithAFieldMissingOrOutOfRangeIsRefused) {
    const std::string token = " token=00112233445566778899aabbccddeeff";
    for (const std::string &bad : {"port=1 streams=1 block=4096" + token, "port=0 streams=1 block=4096 depth=1" + token,
                                  "port=65536 streams=1 block=4096 depth=1" + token,
                                  "port=1 streams=1 block=4294967296 depth=1" + token,
                                  "port=1 streams=65 block=4096 depth=1" + token,
                                  "port=1 streams=-1 block=4096 depth=1" + token,
                                  std::string("port=1 streams=1 block=4096 depth=1 token=0011")})
        EXPECT_FALSE(parse_rdma_grant(bad)) << bad;
}

TEST(DataTokenGrammar, ReplyReadsBackAsWritten) {
    auto t = counting_token();
    EXPECT_EQ(rftp::wire::parse_data_token_reply(rftp::wire::format_data_token_reply(t)), t);
    EXPECT_FALSE(rftp::wire::parse_data_token_reply("DATATOKEN"));
    EXPECT_FALSE(rftp::wire::parse_data_token_reply("TOKEN 00112233445566778899aabbccddeeff"));
}

TEST(PartialNames, AnUploadsPartialFileIsHiddenBesideItsTarget) {
    EXPECT_EQ(server_partial_name("/data/run1/a.bin"), "/data/run1/.a.bin.rftp-part");
    EXPECT_EQ(server_partial_name("/a.bin"), "/.a.bin.rftp-part");
    EXPECT_EQ(server_partial_name("run1/a.bin"), "run1/.a.bin.rftp-part");
    // A path without '/' is in the current directory, on both sides.
    EXPECT_EQ(server_partial_name("a.bin"), ".a.bin.rftp-part");
    EXPECT_EQ(server_journal_name(server_partial_name("/d/a.bin")), "/d/.a.bin.rftp-resume");
    EXPECT_TRUE(is_transfer_bookkeeping(server_partial_name("/d/a.bin")));
    EXPECT_TRUE(is_transfer_bookkeeping(server_journal_name("/d/.a.bin.rftp-part")));
    EXPECT_FALSE(is_transfer_bookkeeping("/d/a.bin"));
}

TEST(PartialNames, ADownloadsPartialFileSitsBesideTheLocalFile) {
    EXPECT_EQ(client_partial_name("out/a.bin"), "out/a.bin.rftp-part");
    EXPECT_EQ(client_journal_name("out/a.bin"), "out/a.bin.rftp-resume");
}
