// The rdma.* config keys and what RADR may be granted under them: caps,
// page-aligned blocks, the pool in whole blocks, and the cross-key rules.
#include <gtest/gtest.h>

#include "daemon/config/config_loader.h"
#include "daemon/rdma/session_rdma.h"

using namespace rftp::daemon;

namespace {

DaemonOptions defaults() {
    auto d = load_default_config();
    EXPECT_TRUE(d) << d.error().message;
    return d ? *d : DaemonOptions{};
}

}  // namespace

TEST(RdmaConfig, EmbeddedDefaultsMatchTheStruct) {
    RdmaOptions want;
    RdmaOptions got = defaults().rdma;
    EXPECT_EQ(got.enabled, want.enabled);
    EXPECT_EQ(got.max_streams, want.max_streams);
    EXPECT_EQ(got.max_block_size, want.max_block_size);
    EXPECT_EQ(got.max_iodepth, want.max_iodepth);
    EXPECT_EQ(got.pool_size, want.pool_size);
    EXPECT_EQ(got.max_pinned, want.max_pinned);
    EXPECT_EQ(got.port_min, want.port_min);
    EXPECT_EQ(got.port_max, want.port_max);
    EXPECT_EQ(got.workers, want.workers);
    EXPECT_EQ(got.sequential_writes, want.sequential_writes);
}

TEST(RdmaConfig, KeysOverlay) {
    auto o = apply_config_text(defaults(),
                               "rdma: {enabled: false, max_streams: 4, max_block_size: 2M, pool_size: 32M, "
                               "max_pinned: 256M, ports: {min: 20000, max: 20010}, sequential_writes: true}\n",
                               "t.yaml");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_FALSE(o->rdma.enabled);
    EXPECT_EQ(o->rdma.max_streams, 4u);
    EXPECT_EQ(o->rdma.max_block_size, 2u << 20);
    EXPECT_EQ(o->rdma.pool_size, 32ull << 20);
    EXPECT_EQ(o->rdma.max_pinned, 256ull << 20);
    EXPECT_EQ(o->rdma.port_min, 20000);
    EXPECT_EQ(o->rdma.port_max, 20010);
    EXPECT_TRUE(o->rdma.sequential_writes);
    EXPECT_EQ(o->rdma.max_iodepth, RdmaOptions{}.max_iodepth);  // untouched keys keep their defaults
}

TEST(RdmaConfig, PoolLargerThanTheCapIsRejectedAtItsKey) {
    auto o = apply_config_text(defaults(), "rdma:\n  pool_size: 2G\n", "t.yaml");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("t.yaml:2:"), std::string::npos) << o.error().message;
    EXPECT_NE(o.error().message.find("rdma.pool_size <= rdma.max_pinned"), std::string::npos) << o.error().message;
}

TEST(RdmaConfig, PortRangeMustBeOrdered) {
    auto o = apply_config_text(defaults(), "rdma: {ports: {min: 30000, max: 20000}}\n", "t.yaml");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("rdma.ports.min <= rdma.ports.max"), std::string::npos) << o.error().message;
}

TEST(RdmaConfig, ZeroWorkersMeansTheDispatcherRunsTheHandlers) {
    auto o = apply_config_text(defaults(), "rdma: {workers: 0}\n", "t.yaml");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->rdma.workers, 0u);
}

TEST(RdmaConfig, WorkersAreAutoUnlessChosen) {
    EXPECT_FALSE(defaults().rdma.workers.has_value());
    auto o = apply_config_text(defaults(), "rdma: {workers: 3}\n", "t.yaml");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->rdma.workers, 3u);
    o = apply_config_text(*o, "rdma: {workers: auto}\n", "t.yaml");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_FALSE(o->rdma.workers.has_value());
    auto bad = apply_config_text(defaults(), "rdma: {workers: many}\n", "t.yaml");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("\"auto\" or an integer in 0..16"), std::string::npos) << bad.error().message;
}

TEST(RdmaGrant, AutoWorkersFollowTheHost) {
    RdmaOptions o;
    EXPECT_EQ(SessionRdma::grant(o, 4, 4u << 20, 8, 60).workers, rftp::middleware::rdma::default_workers());
    o.workers = 5;
    EXPECT_EQ(SessionRdma::grant(o, 4, 4u << 20, 8, 60).workers, 5u);
}

TEST(RdmaConfig, OutOfRangeAndUnknownKeysAreRejected) {
    EXPECT_FALSE(apply_config_text(defaults(), "rdma: {max_streams: 0}\n", "t.yaml"));
    EXPECT_FALSE(apply_config_text(defaults(), "rdma: {max_block_size: 128M}\n", "t.yaml"));
    EXPECT_FALSE(apply_config_text(defaults(), "rdma: {workers: 17}\n", "t.yaml"));
    auto o = apply_config_text(defaults(), "rdma: {max_stream: 4}\n", "t.yaml");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("unknown key"), std::string::npos) << o.error().message;
}

TEST(RdmaGrant, CapsWhatTheClientAsksFor) {
    RdmaOptions o;  // max_streams 8, max_block_size 8M, max_iodepth 32, pool 64M
    auto p = SessionRdma::grant(o, 100, 1ull << 30, 1000, 60);
    EXPECT_EQ(p.streams, 8u);
    EXPECT_EQ(p.block_size, 8u << 20);
    EXPECT_EQ(p.iodepth, 32u);
    EXPECT_EQ(p.blocks, 8u);  // 64M / 8M
    EXPECT_EQ(p.stall_timeout_s, 60u);
}

TEST(RdmaGrant, BlocksAreAtLeast64KAndPageAligned) {
    RdmaOptions o;
    EXPECT_EQ(SessionRdma::grant(o, 1, 1, 1, 60).block_size, 64u << 10);
    EXPECT_EQ(SessionRdma::grant(o, 1, (1u << 20) + 123, 1, 60).block_size, 1u << 20);
    EXPECT_EQ(SessionRdma::grant(o, 1, (1u << 20) + 123, 1, 60).block_size % 4096, 0u);
}

TEST(RdmaGrant, PoolHoldsAtLeastTwoAndAtMost1024Blocks) {
    RdmaOptions o;
    o.pool_size = 1u << 20;
    EXPECT_EQ(SessionRdma::grant(o, 1, 8u << 20, 1, 60).blocks, 2u);
    o.pool_size = 1ull << 36;
    EXPECT_EQ(SessionRdma::grant(o, 1, 64u << 10, 1, 60).blocks, 1024u);
}
