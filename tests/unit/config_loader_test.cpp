// The config loader against real YAML texts and files: defaults, overlays,
// and every rejection naming the key, the line and what was expected.
#include "daemon/config/config_loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "daemon/auth/password_hash.h"

using namespace rftp::daemon;
namespace fs = std::filesystem;

namespace {

const std::string kHash =
    "$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU=$"
    "cCO9yzr9c0hGHAbNgf046/2o+7qQT44+qbVD9lRdofLVQylVYT8Pz2LUlwUkKpr55h6F3A1lHkDfzwF7RVdYhw==";

DaemonOptions defaults() {
    auto d = load_default_config();
    EXPECT_TRUE(d) << d.error().message;
    return d ? *d : DaemonOptions{};
}

rftp::Result<DaemonOptions> overlay(const std::string &yaml) {
    return apply_config_text(defaults(), yaml, "test.yaml");
}

std::string user_entry(const std::string &name, const std::string &root = "/srv/ftp",
                       const std::string &extra = "") {
    return "  - name: " + name + "\n    password_hash: \"" + kHash + "\"\n    root: " + root + "\n" + extra;
}

fs::path source_dir() { return fs::path(__FILE__).parent_path().parent_path().parent_path(); }

}  // namespace

TEST(ConfigLoader, EmbeddedDefaultsMatchTheDocumentedDefaults) {
    // conf/rftpd-default.yaml must restate options.h exactly, except for the
    // values the default config deliberately pins.
    const DaemonOptions d = defaults();
    const DaemonOptions s;
    ASSERT_EQ(d.listen.size(), 1u);
    EXPECT_EQ(d.listen[0].address, "127.0.0.1");
    EXPECT_EQ(d.listen[0].port, 2121);
    EXPECT_FALSE(d.anonymous_enabled);
    EXPECT_TRUE(d.users.empty());
    EXPECT_EQ(d.passive_port_min, s.passive_port_min);
    EXPECT_EQ(d.passive_port_max, s.passive_port_max);
    EXPECT_EQ(d.passive_address, s.passive_address);
    EXPECT_EQ(d.active_mode, s.active_mode);
    EXPECT_EQ(d.max_sessions, s.max_sessions);
    EXPECT_EQ(d.max_sessions_per_ip, s.max_sessions_per_ip);
    EXPECT_EQ(d.login_timeout_s, s.login_timeout_s);
    EXPECT_EQ(d.idle_timeout_s, s.idle_timeout_s);
    EXPECT_EQ(d.data_timeout_s, s.data_timeout_s);
    EXPECT_EQ(d.max_login_failures, s.max_login_failures);
    EXPECT_EQ(d.max_streams, s.max_streams);
    EXPECT_EQ(d.max_block_size, s.max_block_size);
    EXPECT_EQ(d.anonymous_root, s.anonymous_root);
    EXPECT_EQ(d.banner, s.banner);
    EXPECT_EQ(d.log_level, s.log_level);
    EXPECT_EQ(d.sync_before_rename, s.sync_before_rename);
    EXPECT_EQ(d.preallocate, s.preallocate);
    EXPECT_EQ(d.disk.direct_io, s.disk.direct_io);
    EXPECT_EQ(d.disk.readers, s.disk.readers);
    EXPECT_EQ(d.disk.writers, s.disk.writers);
    EXPECT_EQ(d.disk.queue_depth, s.disk.queue_depth);
}

TEST(ConfigLoader, DiskEngineKeys) {
    auto o = overlay("storage: {direct_io: false, readers: 2, writers: 3, queue_depth: 16}\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_FALSE(o->disk.direct_io);
    EXPECT_EQ(o->disk.readers, 2u);
    EXPECT_EQ(o->disk.writers, 3u);
    EXPECT_EQ(o->disk.queue_depth, 16u);
    EXPECT_FALSE(overlay("storage: {readers: 0}\n"));
    EXPECT_FALSE(overlay("storage: {queue_depth: 65}\n"));
}

TEST(ConfigLoader, StorageSwitchesAreOnByDefaultAndCanBeTurnedOff) {
    EXPECT_TRUE(defaults().sync_before_rename);
    EXPECT_TRUE(defaults().preallocate);
    auto o = overlay("storage: {sync_before_rename: false, preallocate: false}\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_FALSE(o->sync_before_rename);
    EXPECT_FALSE(o->preallocate);
    EXPECT_FALSE(overlay("storage: {sync: false}\n"));  // unknown key
}

TEST(ConfigLoader, FileOverlaysOnlyTheKeysItGives) {
    auto o = overlay("limits:\n  max_sessions: 5\nparallel:\n  max_block_size: 1M\nbanner: hello there\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->max_sessions, 5u);
    EXPECT_EQ(o->max_sessions_per_ip, 16u);   // sibling untouched
    EXPECT_EQ(o->max_block_size, 1u << 20);
    EXPECT_EQ(o->max_streams, 16u);
    EXPECT_EQ(o->banner, "hello there");
    ASSERT_EQ(o->listen.size(), 1u);          // untouched section
    EXPECT_EQ(o->listen[0].port, 2121);
}

TEST(ConfigLoader, EmptyTextChangesNothing) {
    auto o = overlay("# only a comment\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->max_sessions, 64u);
}

TEST(ConfigLoader, ListsReplaceTheWholeList) {
    auto o = overlay("listen:\n  - address: \"::\"\n    port: 21\n    allow_plaintext: true\n"
                     "  - address: 0.0.0.0\n    port: 2121\n    allow_plaintext: true\n");
    ASSERT_TRUE(o) << o.error().message;
    ASSERT_EQ(o->listen.size(), 2u);
    EXPECT_EQ(o->listen[0].address, "::");
    EXPECT_EQ(o->listen[0].port, 21);
    EXPECT_EQ(o->listen[1].address, "0.0.0.0");
}

TEST(ConfigLoader, ReadsUsersAndAnonymous) {
    auto o = overlay("users:\n" + user_entry("alice", "/srv/alice", "    access: read-write\n") +
                     user_entry("bob", "/srv/bob") +
                     "anonymous:\n  enabled: true\n  root: /srv/pub\npassive_ports: {min: 50000, max: 50100}\n"
                     "passive_address: 192.0.2.7\nactive_mode: yes\nlog:\n  level: debug\n");
    ASSERT_TRUE(o) << o.error().message;
    ASSERT_EQ(o->users.size(), 2u);
    EXPECT_EQ(o->users[0].name, "alice");
    EXPECT_EQ(o->users[0].root, "/srv/alice");
    EXPECT_EQ(o->users[0].password_hash, kHash);
    EXPECT_EQ(o->users[0].access, Access::read_write);
    EXPECT_EQ(o->users[1].access, Access::read_only);  // the default
    EXPECT_TRUE(o->anonymous_enabled);
    EXPECT_EQ(o->anonymous_root, "/srv/pub");
    EXPECT_EQ(o->passive_port_min, 50000);
    EXPECT_EQ(o->passive_port_max, 50100);
    EXPECT_EQ(o->passive_address, "192.0.2.7");
    EXPECT_TRUE(o->active_mode);
    EXPECT_EQ(o->log_level, "debug");
}

TEST(ConfigLoader, BlockSizeAcceptsIntegersAndSuffixes) {
    for (auto [text, bytes] : std::vector<std::pair<std::string, uint32_t>>{
             {"65536", 65536}, {"64K", 65536}, {"64KiB", 65536}, {"8M", 8u << 20}, {"256MiB", 256u << 20}}) {
        auto o = overlay("parallel:\n  max_block_size: " + text + "\n");
        ASSERT_TRUE(o) << text << ": " << o.error().message;
        EXPECT_EQ(o->max_block_size, bytes) << text;
    }
    // The rule itself, which rftp's options share, is tests/unit/byte_size_test.cpp's.
    EXPECT_FALSE(overlay("parallel:\n  max_block_size: 1T\n"));
}

namespace {

// A new file under /tmp holding text; the caller unlinks it.
std::string temp_config(const std::string &text) {
    char tmpl[] = "/tmp/rftp-config-XXXXXX";
    int fd = ::mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    ::close(fd);
    std::ofstream(tmpl) << text;
    return tmpl;
}

}  // namespace

TEST(ConfigLoader, LoadsTheShippedExampleFile) {
    // A copy of its own: the checkout's may belong to another user than the
    // one running the tests, which rftpd rightly refuses.
    const std::string path = temp_config("");
    std::filesystem::copy_file(source_dir() / "conf" / "rftpd.yaml", path,
                               std::filesystem::copy_options::overwrite_existing);
    auto o = load_config_file(path);
    ::unlink(path.c_str());
    ASSERT_TRUE(o) << o.error().message;
}

TEST(ConfigLoader, LoadsARealFileAndNamesItInErrors) {
    const std::string path = temp_config("timeouts:\n  idle: 42\n");
    auto ok = load_config_file(path);
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(ok->idle_timeout_s, 42u);
    EXPECT_EQ(ok->login_timeout_s, 30u);

    std::ofstream(path) << "timeouts:\n  idle: 0\n";
    auto bad = load_config_file(path);
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find(path + ":2:"), std::string::npos) << bad.error().message;
    ::unlink(path.c_str());

    auto missing = load_config_file("/nonexistent/rftpd.yaml");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code, -ENOENT);
    EXPECT_NE(missing.error().message.find("/nonexistent/rftpd.yaml"), std::string::npos);
}

TEST(ConfigLoader, RefusesAFileOthersMayWrite) {
    // Whoever may write it chooses who logs in and where.
    const std::string path = temp_config("timeouts:\n  idle: 42\n");
    ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
    auto anyone = load_config_file(path);
    ASSERT_FALSE(anyone);
    EXPECT_EQ(anyone.error().code, -EPERM);
    EXPECT_NE(anyone.error().message.find("writable by anyone"), std::string::npos) << anyone.error().message;
    EXPECT_NE(anyone.error().message.find("chmod go-w " + path), std::string::npos) << anyone.error().message;
    // Its own group (the daemon's, as a umask of 002 makes it) may write it.
    ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
    EXPECT_TRUE(load_config_file(path));
    if (::geteuid() == 0) {  // only root can give the file away
        ASSERT_EQ(::chown(path.c_str(), 0, 12345), 0);
        auto group = load_config_file(path);
        ASSERT_FALSE(group);
        EXPECT_NE(group.error().message.find("writable by group 12345"), std::string::npos) << group.error().message;
        ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
        EXPECT_TRUE(load_config_file(path));
        ASSERT_EQ(::chown(path.c_str(), 12345, 12345), 0);
        auto owner = load_config_file(path);
        ASSERT_FALSE(owner);
        EXPECT_NE(owner.error().message.find("owned by uid 12345"), std::string::npos) << owner.error().message;
    }
    ::unlink(path.c_str());
}

struct RejectCase {
    const char *name;
    std::string yaml;
    std::vector<std::string> message_contains;  // key path, "test.yaml:<line>:", what was expected
};

class ConfigRejects : public ::testing::TestWithParam<RejectCase> {};

TEST_P(ConfigRejects, WithFileLineKeyAndExpectation) {
    const RejectCase &c = GetParam();
    auto o = overlay(c.yaml);
    ASSERT_FALSE(o) << "accepted:\n" << c.yaml;
    EXPECT_EQ(o.error().code, -EINVAL);
    for (const auto &part : c.message_contains) {
        EXPECT_NE(o.error().message.find(part), std::string::npos)
            << "missing \"" << part << "\" in: " << o.error().message;
    }
}

INSTANTIATE_TEST_SUITE_P(
    AllCases, ConfigRejects,
    ::testing::Values(
        RejectCase{"unknown_top_key", "banner: x\nlimts:\n  max_sessions: 3\n",
                   {"test.yaml:2:1: limts: unknown key", "limits"}},
        RejectCase{"unknown_nested_key", "limits:\n  max_session: 3\n",
                   {"test.yaml:2:3: limits.max_session: unknown key", "max_sessions_per_ip"}},
        RejectCase{"duplicate_key", "banner: a\nbanner: b\n", {"test.yaml:2:", "banner: duplicate key"}},
        RejectCase{"bool_wrong_type", "active_mode: 3\n", {"test.yaml:1:", "active_mode", "true or false", "\"3\""}},
        RejectCase{"int_wrong_type", "limits:\n  max_sessions: [1]\n",
                   {"test.yaml:2:", "limits.max_sessions", "integer", "a list"}},
        RejectCase{"int_not_number", "limits:\n  max_sessions: many\n", {"limits.max_sessions", "\"many\""}},
        RejectCase{"int_negative", "limits:\n  max_login_failures: -1\n", {"limits.max_login_failures", "1..100"}},
        RejectCase{"section_wrong_type", "limits: 5\n", {"test.yaml:1:", "limits: expected a mapping"}},
        RejectCase{"top_level_list", "- a\n- b\n", {"test.yaml:1:", "expected a mapping"}},
        RejectCase{"yaml_syntax", "limits: [1, 2\n", {"test.yaml:", "invalid YAML"}},
        RejectCase{"listen_port_zero", "listen:\n  - address: 127.0.0.1\n    port: 0\n",
                   {"test.yaml:3:", "listen[0].port", "1..65535"}},
        RejectCase{"listen_port_too_big", "listen:\n  - address: 127.0.0.1\n    port: 70000\n",
                   {"listen[0].port", "1..65535", "\"70000\""}},
        RejectCase{"listen_hostname", "listen:\n  - address: 127.0.0.1\n    port: 21\n  - address: localhost\n    port: 21\n",
                   {"test.yaml:4:", "listen[1].address", "numeric IPv4 or IPv6"}},
        RejectCase{"listen_missing_port", "listen:\n  - address: 127.0.0.1\n", {"test.yaml:2:", "listen[0]", "missing key 'port'"}},
        RejectCase{"listen_unknown_key", "listen:\n  - address: 127.0.0.1\n    port: 21\n    prot: tcp\n",
                   {"test.yaml:4:", "listen[0].prot", "unknown key"}},
        RejectCase{"listen_empty", "listen: []\n", {"listen", "non-empty list"}},
        RejectCase{"passive_min_above_max", "passive_ports:\n  min: 6000\n  max: 5000\n",
                   {"test.yaml:2:", "passive_ports.min", "min <= passive_ports.max"}},
        RejectCase{"passive_half_set", "passive_ports:\n  max: 5000\n", {"test.yaml:2:", "passive_ports.max"}},
        RejectCase{"passive_port_range", "passive_ports:\n  min: 1\n  max: 65536\n", {"passive_ports.max", "0..65535"}},
        RejectCase{"passive_address_v6", "passive_address: \"::1\"\n", {"passive_address", "IPv4"}},
        RejectCase{"max_streams_zero", "parallel:\n  max_streams: 0\n", {"test.yaml:2:", "parallel.max_streams", "1..64"}},
        RejectCase{"max_streams_65", "parallel:\n  max_streams: 65\n", {"parallel.max_streams", "1..64"}},
        RejectCase{"block_too_small", "parallel:\n  max_block_size: 32K\n", {"parallel.max_block_size", "65536..268435456"}},
        RejectCase{"block_too_big", "parallel:\n  max_block_size: 512M\n", {"parallel.max_block_size"}},
        RejectCase{"block_garbage", "parallel:\n  max_block_size: lots\n", {"parallel.max_block_size", "\"lots\""}},
        RejectCase{"timeout_zero", "timeouts:\n  idle: 0\n", {"test.yaml:2:", "timeouts.idle", "1..86400"}},
        RejectCase{"timeout_login_zero", "timeouts:\n  login: 0\n", {"timeouts.login"}},
        RejectCase{"timeout_data_zero", "timeouts:\n  data: 0\n", {"timeouts.data"}},
        RejectCase{"duplicate_user", "users:\n" + user_entry("alice") + user_entry("alice"),
                   {"test.yaml:5:", "users[1].name", "duplicate user name \"alice\""}},
        RejectCase{"relative_root", "users:\n" + user_entry("alice", "srv/ftp"),
                   {"test.yaml:4:", "users[0].root", "absolute path"}},
        RejectCase{"missing_root", "users:\n  - name: alice\n    password_hash: \"" + kHash + "\"\n",
                   {"test.yaml:2:", "users[0]", "missing key 'root'"}},
        RejectCase{"empty_root", "users:\n" + user_entry("alice", "\"\""), {"users[0].root", "missing"}},
        RejectCase{"bad_access", "users:\n" + user_entry("alice", "/srv", "    access: write\n"),
                   {"test.yaml:5:", "users[0].access", "read-only or read-write", "\"write\""}},
        RejectCase{"plain_password",
                   "users:\n  - name: alice\n    password_hash: hunter2\n    root: /srv\n",
                   {"test.yaml:3:", "users[0].password_hash", "--hash-password"}},
        RejectCase{"user_unknown_key", "users:\n" + user_entry("alice", "/srv", "    password: x\n"),
                   {"users[0].password: unknown key"}},
        RejectCase{"user_reserved_name", "users:\n" + user_entry("ftp"), {"users[0].name", "reserved for anonymous"}},
        RejectCase{"user_name_space", "users:\n" + user_entry("\"al ice\""), {"users[0].name"}},
        RejectCase{"anonymous_without_root", "anonymous:\n  enabled: true\n",
                   {"test.yaml:2:", "anonymous.enabled", "anonymous.root is missing"}},
        RejectCase{"anonymous_relative_root", "anonymous:\n  root: pub\n", {"anonymous.root", "absolute"}},
        RejectCase{"banner_newline", "banner: \"two\\nlines\"\n", {"banner", "one line"}},
        RejectCase{"banner_nul", "banner: \"a\\0b\"\n", {"banner", "NUL"}},
        RejectCase{"log_level", "log:\n  level: verbose\n", {"test.yaml:2:", "log.level", "debug", "\"verbose\""}}),
    [](const ::testing::TestParamInfo<RejectCase> &info) { return std::string(info.param.name); });

TEST(ConfigLoader, PlainPasswordIsNotEchoedInTheError) {
    auto o = overlay("users:\n  - name: alice\n    password_hash: hunter2\n    root: /srv\n");
    ASSERT_FALSE(o);
    EXPECT_EQ(o.error().message.find("hunter2"), std::string::npos) << o.error().message;
}

TEST(ConfigLoader, ListenersTheKernelCouldNotBothBindAreRefused) {
    // The same address twice, and a wildcard beside a specific address.
    for (const char *yaml : {"listen: [{address: 127.0.0.1, port: 2121}, {address: 127.0.0.1, port: 2121}]\n",
                             "listen: [{address: 0.0.0.0, port: 21}, {address: 192.0.2.1, port: 21}]\n",
                             "listen: [{address: '::1', port: 21}, {address: '::', port: 21}]\n"}) {
        auto o = overlay(yaml);
        ASSERT_FALSE(o) << yaml;
        EXPECT_NE(o.error().message.find("already covers"), std::string::npos) << o.error().message;
    }
    // Other ports, and the two families' wildcards (IPv6 listeners are IPv6-only), are fine.
    for (const char *yaml : {"listen: [{address: 127.0.0.1, port: 2121}, {address: 127.0.0.1, port: 2122}]\n",
                             "listen: [{address: 0.0.0.0, port: 21, allow_plaintext: true},"
                             " {address: '::', port: 21, allow_plaintext: true}]\n"}) {
        auto o = overlay(yaml);
        EXPECT_TRUE(o) << yaml << ": " << o.error().message;
    }
}

TEST(ConfigLoader, ANetworkListenerWithoutTlsIsRefusedUnlessPlainTextIsAllowedInWords) {
    auto o = overlay("listen: [{address: 0.0.0.0, port: 21}]\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("clear text"), std::string::npos) << o.error().message;
    EXPECT_NE(o.error().message.find("tls.certificate"), std::string::npos) << o.error().message;
    EXPECT_NE(o.error().message.find("allow_plaintext"), std::string::npos) << o.error().message;
    o = overlay("listen: [{address: 0.0.0.0, port: 21, allow_plaintext: true}]\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_TRUE(o->listen[0].allow_plaintext);
    EXPECT_FALSE(requires_tls(o->listen[0]));
    // Loopback may stay plain: the demo and the tests.
    for (const char *loopback : {"127.0.0.1", "127.9.9.9", "'::1'"}) {
        o = overlay(std::string("listen: [{address: ") + loopback + ", port: 21}]\n");
        ASSERT_TRUE(o) << loopback << ": " << o.error().message;
        EXPECT_FALSE(requires_tls(o->listen[0])) << loopback;
    }
}

TEST(ConfigLoader, TlsKeysMustMakeSenseTogether) {
    auto o = overlay("listen: [{address: 127.0.0.1, port: 990, implicit_tls: true}]\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("implicit_tls"), std::string::npos) << o.error().message;
    o = overlay("tls: {certificate: /etc/rftpd/cert.pem}\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("go together"), std::string::npos) << o.error().message;
    o = overlay("rdma: {require_tls: true}\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("rdma.require_tls"), std::string::npos) << o.error().message;
    o = overlay("tls: {min_version: '1.1'}\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("1.2"), std::string::npos) << o.error().message;
    o = overlay("tls: {data_binding: none}\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("session or address"), std::string::npos) << o.error().message;
    o = overlay("tls: {certificate: /c.pem, key: /k.pem, min_version: '1.3', data_binding: address}\n"
                "listen: [{address: 0.0.0.0, port: 990, implicit_tls: true}]\n");
    ASSERT_TRUE(o) << o.error().message;
    EXPECT_EQ(o->tls.min_version, "1.3");
    EXPECT_EQ(o->tls.data_binding, DataBinding::address);
    EXPECT_TRUE(requires_tls(o->listen[0]));
}

TEST(ConfigLoader, ASecondYamlDocumentIsRefusedNotIgnored) {
    auto o = overlay("log: {level: debug}\n---\nlisten: [{address: 0.0.0.0, port: 21}]\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find("holds 2 YAML documents"), std::string::npos) << o.error().message;
    // One document with an explicit start marker is one document.
    EXPECT_TRUE(overlay("---\nlog: {level: debug}\n"));
}

TEST(ConfigLoader, AStreamTheYamlParserCannotGetPastIsRefusedNotLoopedOn) {
    // yaml-cpp 0.7 hands out the same empty document for ever here, taking
    // memory at every turn (a fuzzing find: tests/fuzz/corpus/config).
    for (const char *yaml : {",", ", /etc/rftpd/rftpd.yaml: rftpd configuration.\n", "log: {level: debug}\n---\n,\n"}) {
        auto o = overlay(yaml);
        ASSERT_FALSE(o) << yaml;
        EXPECT_NE(o.error().message.find("YAML"), std::string::npos) << o.error().message;
    }
    auto o = overlay(",\n");
    ASSERT_FALSE(o);
    EXPECT_NE(o.error().message.find(":1:1: invalid YAML"), std::string::npos) << o.error().message;
    EXPECT_TRUE(overlay("") && overlay("# nothing but a comment\n") && overlay("---\n"));
}
