#include "daemon/config/schema.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <set>
#include <type_traits>

#include "common/log.h"
#include "common/yaml/config_error.h"
#include "common/yaml/yaml_values.h"
#include "daemon/auth/anonymous_name.h"
#include "daemon/auth/password_hash.h"
#include "protocol/rdma_setup.h"

namespace rftp::daemon {
using namespace rftp::yaml;  // KeyLocation, config_error and the typed readers
namespace {

// Keys given in this text, with where they were, for checks that span keys.
using GivenKeys = std::map<std::string, YAML::Mark>;

using ApplyFn = Status (*)(const YAML::Node &, const KeyLocation &, DaemonOptions &);

struct Setting {
    std::string_view path;  // dotted key path
    ApplyFn apply;
};

template <auto Member, uint64_t Min, uint64_t Max>
Status set_uint(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_uint(node, at, Min, Max);
    if (!value) return fail(value.error());
    o.*Member = static_cast<std::remove_cvref_t<decltype(o.*Member)>>(*value);
    return {};
}

template <auto Member>
Status set_bool(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_bool(node, at);
    if (!value) return fail(value.error());
    o.*Member = *value;
    return {};
}

template <auto Member, uint64_t Min, uint64_t Max>
Status set_rdma_uint(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_uint(node, at, Min, Max);
    if (!value) return fail(value.error());
    o.rdma.*Member = static_cast<std::remove_cvref_t<decltype(o.rdma.*Member)>>(*value);
    return {};
}

template <auto Member, uint64_t Min, uint64_t Max>
Status set_rdma_bytes(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_byte_size(node, at, Min, Max);
    if (!value) return fail(value.error());
    o.rdma.*Member = static_cast<std::remove_cvref_t<decltype(o.rdma.*Member)>>(*value);
    return {};
}

template <auto Member>
Status set_rdma_bool(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_bool(node, at);
    if (!value) return fail(value.error());
    o.rdma.*Member = *value;
    return {};
}

template <class T, T middleware::disk::DiskOptions::*Member>
Status set_disk(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_bool(node, at);
    if (!value) return fail(value.error());
    o.disk.*Member = *value;
    return {};
}

template <unsigned middleware::disk::DiskOptions::*Member, uint64_t Min, uint64_t Max>
Status set_disk_count(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_uint(node, at, Min, Max);
    if (!value) return fail(value.error());
    o.disk.*Member = static_cast<unsigned>(*value);
    return {};
}

// "auto" (the default) or a count.
Status set_rdma_workers(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    if (node.IsScalar() && node.Scalar() == "auto") {
        o.rdma.workers.reset();
        return {};
    }
    auto value = read_uint(node, at, 0, 16);
    if (!value) return fail(config_error(at, "expected \"auto\" or an integer in 0..16, got " + describe_node(node)));
    o.rdma.workers = static_cast<unsigned>(*value);
    return {};
}

Status set_passive_address(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    // Empty means "the control connection's local address"; otherwise it goes
    // into 227 replies, which can only carry IPv4.
    auto text = read_string(node, at);
    if (!text) return fail(text.error());
    if (text->empty()) {
        o.passive_address.clear();
        return {};
    }
    auto addr = read_ip_address(node, at, /*ipv4_only=*/true);
    if (!addr) return fail(addr.error());
    o.passive_address = *addr;
    return {};
}

Status set_max_block_size(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto value = read_byte_size(node, at, 64u << 10, 256u << 20);
    if (!value) return fail(value.error());
    o.max_block_size = static_cast<uint32_t>(*value);
    return {};
}

Status set_anonymous_root(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    // Empty is allowed here (anonymous off); the cross-key check below insists
    // on a root when anonymous is enabled.
    auto text = read_string(node, at);
    if (!text) return fail(text.error());
    if (text->empty()) {
        o.anonymous_root.clear();
        return {};
    }
    auto path = read_absolute_path(node, at);
    if (!path) return fail(path.error());
    o.anonymous_root = *path;
    return {};
}

template <std::string TlsOptions::*Member>
Status set_tls_file(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto text = read_string(node, at);
    if (!text) return fail(text.error());
    if (text->empty()) {
        o.tls.*Member = "";
        return {};
    }
    auto path = read_absolute_path(node, at);
    if (!path) return fail(path.error());
    o.tls.*Member = *path;
    return {};
}

Status set_tls_min_version(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    if (node.IsScalar() && (node.Scalar() == "1.2" || node.Scalar() == "1.3")) {
        o.tls.min_version = node.Scalar();
        return {};
    }
    return fail(config_error(at, "expected \"1.2\" or \"1.3\", got " + describe_node(node)));
}

Status set_tls_data_binding(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    if (node.IsScalar() && node.Scalar() == "session") o.tls.data_binding = DataBinding::session;
    else if (node.IsScalar() && node.Scalar() == "address") o.tls.data_binding = DataBinding::address;
    else return fail(config_error(at, "expected session or address, got " + describe_node(node)));
    return {};
}

Status set_banner(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto text = read_single_line(node, at, 200);
    if (!text) return fail(text.error());
    o.banner = *text;
    return {};
}

Status set_log_level(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    auto text = read_string(node, at);
    if (!text) return fail(text.error());
    log::Level level;
    if (!log::parse_level(*text, level)) {
        return fail(config_error(at, "expected one of error, warning, notice, info, debug, got " +
                                         describe_node(node)));
    }
    o.log_level = *text;
    return {};
}

// Checks a list entry's keys against the allowed ones (and for duplicates).
Status check_entry_keys(const YAML::Node &entry, const KeyLocation &at,
                        std::initializer_list<std::string_view> allowed) {
    if (!entry.IsMap()) {
        return fail(config_error(at, "expected a mapping, got " + describe_node(entry)));
    }
    std::set<std::string> seen;
    for (const auto &kv : entry) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
        auto key_at = at.child(key, kv.first.Mark());
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            std::string list;
            for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
            return fail(config_error(key_at, "unknown key (expected one of: " + list + ")"));
        }
        if (!seen.insert(key).second) return fail(config_error(key_at, "duplicate key"));
    }
    return {};
}

// The value of a required key in a list entry, or an error at the entry.
Result<YAML::Node> required_key(const YAML::Node &entry, const KeyLocation &at, const char *key) {
    YAML::Node value = entry[key];
    if (!value.IsDefined()) return fail(config_error(at, std::string("missing key '") + key + "'"));
    return value;
}

KeyLocation value_location(const KeyLocation &entry_at, const YAML::Node &entry, const char *key) {
    return entry_at.child(key, entry[key].Mark());
}

// Two listeners the kernel would not both bind: one port, one address
// family, and the same address or a wildcard on either side. (IPv6
// listeners are IPv6-only, so 0.0.0.0 and :: do not clash.)
bool listeners_clash(const ListenAddress &a, const ListenAddress &b) {
    if (a.port != b.port) return false;
    const bool v6 = a.address.find(':') != std::string::npos;
    if (v6 != (b.address.find(':') != std::string::npos)) return false;
    unsigned char x[16] = {}, y[16] = {}, any[16] = {};
    const int family = v6 ? AF_INET6 : AF_INET;
    const std::size_t len = v6 ? 16 : 4;
    if (::inet_pton(family, a.address.c_str(), x) != 1 || ::inet_pton(family, b.address.c_str(), y) != 1) return false;
    return std::memcmp(x, y, len) == 0 || std::memcmp(x, any, len) == 0 || std::memcmp(y, any, len) == 0;
}

Status set_listen(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    if (!node.IsSequence() || node.size() == 0) {
        return fail(config_error(at, "expected a non-empty list of {address, port[, implicit_tls, allow_plaintext]}, got " + describe_node(node)));
    }
    std::vector<ListenAddress> listen;
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node entry = node[i];
        const KeyLocation entry_at = at.element(i, entry.Mark());
        if (auto ok = check_entry_keys(entry, entry_at, {"address", "port", "implicit_tls", "allow_plaintext"}); !ok)
            return ok;
        auto address_node = required_key(entry, entry_at, "address");
        if (!address_node) return fail(address_node.error());
        auto port_node = required_key(entry, entry_at, "port");
        if (!port_node) return fail(port_node.error());

        auto address = read_ip_address(*address_node, value_location(entry_at, entry, "address"));
        if (!address) return fail(address.error());
        auto port = read_uint(*port_node, value_location(entry_at, entry, "port"), 1, 65535);
        if (!port) return fail(port.error());
        ListenAddress here{*address, static_cast<uint16_t>(*port)};
        for (auto [key, flag] : {std::pair{"implicit_tls", &here.implicit_tls}, {"allow_plaintext", &here.allow_plaintext}}) {
            if (!entry[key].IsDefined()) continue;
            auto value = read_bool(entry[key], value_location(entry_at, entry, key));
            if (!value) return fail(value.error());
            *flag = *value;
        }
        for (const ListenAddress &earlier : listen)
            if (listeners_clash(earlier, here))
                return fail(config_error(entry_at, "listens on " + here.address + " port " + std::to_string(here.port) +
                                                       ", which " + earlier.address + " port " +
                                                       std::to_string(earlier.port) +
                                                       " already covers: the second could not be bound"));
        listen.push_back(here);
    }
    o.listen = std::move(listen);
    return {};
}

Result<std::string> read_user_name(const YAML::Node &node, const KeyLocation &at) {
    auto name = read_string(node, at);
    if (!name) return name;
    bool printable = !name->empty() && name->size() <= 64 &&
                     std::none_of(name->begin(), name->end(), [](unsigned char c) {
                         return c <= 0x20 || c == 0x7f;
                     });
    if (!printable) {
        return fail(config_error(at, "expected a user name of 1..64 bytes without spaces or control characters, got " +
                                         describe_node(node)));
    }
    if (is_anonymous_name(*name)) {
        return fail(config_error(at, "\"" + *name + "\" is reserved for anonymous login (see anonymous.enabled)"));
    }
    return name;
}

Result<Access> read_access(const YAML::Node &node, const KeyLocation &at) {
    if (node.IsScalar() && node.Scalar() == "read-only") return Access::read_only;
    if (node.IsScalar() && node.Scalar() == "read-write") return Access::read_write;
    return fail(config_error(at, "expected read-only or read-write, got " + describe_node(node)));
}

Status set_users(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o) {
    if (node.IsNull()) {
        o.users.clear();
        return {};
    }
    if (!node.IsSequence()) {
        return fail(config_error(at, "expected a list of {name, password_hash, root, access}, got " +
                                         describe_node(node)));
    }
    std::vector<UserAccount> users;
    std::set<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) {
        const YAML::Node entry = node[i];
        const KeyLocation entry_at = at.element(i, entry.Mark());
        if (auto ok = check_entry_keys(entry, entry_at, {"name", "password_hash", "root", "access"}); !ok) {
            return ok;
        }
        UserAccount user;

        auto name_node = required_key(entry, entry_at, "name");
        if (!name_node) return fail(name_node.error());
        const KeyLocation name_at = value_location(entry_at, entry, "name");
        auto name = read_user_name(*name_node, name_at);
        if (!name) return fail(name.error());
        if (!names.insert(*name).second) {
            return fail(config_error(name_at, "duplicate user name \"" + *name + "\""));
        }
        user.name = *name;

        auto hash_node = required_key(entry, entry_at, "password_hash");
        if (!hash_node) return fail(hash_node.error());
        const KeyLocation hash_at = value_location(entry_at, entry, "password_hash");
        auto hash = read_string(*hash_node, hash_at);
        if (!hash) return fail(hash.error());
        if (auto ok = check_hash_format(*hash); !ok) {
            // The message must not echo the value: it may be a plain password
            // pasted by mistake, and config errors end up in logs.
            return fail(config_error(hash_at, "expected a hash from `rftpd --hash-password` or mkpasswd ($y$...): " +
                                                  ok.error().message));
        }
        user.password_hash = *hash;

        auto root_node = required_key(entry, entry_at, "root");
        if (!root_node) return fail(root_node.error());
        auto root = read_absolute_path(*root_node, value_location(entry_at, entry, "root"));
        if (!root) return fail(root.error());
        user.root = *root;

        if (entry["access"].IsDefined()) {
            auto access = read_access(entry["access"], value_location(entry_at, entry, "access"));
            if (!access) return fail(access.error());
            user.access = *access;
        }
        users.push_back(std::move(user));
    }
    o.users = std::move(users);
    return {};
}

// Every key the config accepts. Sections ("limits", "timeouts", ...) are the
// prefixes of these paths.
constexpr std::array kSettings{
    Setting{"listen", &set_listen},
    Setting{"passive_ports.min", &set_uint<&DaemonOptions::passive_port_min, 0, 65535>},
    Setting{"passive_ports.max", &set_uint<&DaemonOptions::passive_port_max, 0, 65535>},
    Setting{"passive_address", &set_passive_address},
    Setting{"active_mode", &set_bool<&DaemonOptions::active_mode>},
    Setting{"limits.max_sessions", &set_uint<&DaemonOptions::max_sessions, 1, 100000>},
    Setting{"limits.max_sessions_per_ip", &set_uint<&DaemonOptions::max_sessions_per_ip, 1, 100000>},
    Setting{"limits.max_login_failures", &set_uint<&DaemonOptions::max_login_failures, 1, 100>},
    Setting{"limits.failed_login_delay", &set_uint<&DaemonOptions::failed_login_delay_s, 0, 60>},
    Setting{"limits.failed_login_max_delay", &set_uint<&DaemonOptions::failed_login_max_delay_s, 1, 3600>},
    Setting{"timeouts.login", &set_uint<&DaemonOptions::login_timeout_s, 1, 86400>},
    Setting{"timeouts.idle", &set_uint<&DaemonOptions::idle_timeout_s, 1, 86400>},
    Setting{"timeouts.data", &set_uint<&DaemonOptions::data_timeout_s, 1, 86400>},
    Setting{"parallel.max_streams", &set_uint<&DaemonOptions::max_streams, 1, 64>},
    Setting{"parallel.max_block_size", &set_max_block_size},
    Setting{"storage.sync_before_rename", &set_bool<&DaemonOptions::sync_before_rename>},
    Setting{"storage.preallocate", &set_bool<&DaemonOptions::preallocate>},
    Setting{"storage.direct_io", &set_disk<bool, &middleware::disk::DiskOptions::direct_io>},
    Setting{"storage.readers", &set_disk_count<&middleware::disk::DiskOptions::readers, 1, 16>},
    Setting{"storage.writers", &set_disk_count<&middleware::disk::DiskOptions::writers, 1, 16>},
    Setting{"storage.queue_depth", &set_disk_count<&middleware::disk::DiskOptions::queue_depth, 1, 64>},
    Setting{"rdma.enabled", &set_rdma_bool<&RdmaOptions::enabled>},
    Setting{"rdma.sequential_writes", &set_rdma_bool<&RdmaOptions::sequential_writes>},
    Setting{"rdma.max_streams", &set_rdma_uint<&RdmaOptions::max_streams, 1, ftp::kMaxRdmaStreams>},
    Setting{"rdma.max_block_size", &set_rdma_bytes<&RdmaOptions::max_block_size, 64u << 10, 64u << 20>},
    Setting{"rdma.max_iodepth", &set_rdma_uint<&RdmaOptions::max_iodepth, 1, 256>},
    Setting{"rdma.pool_size", &set_rdma_bytes<&RdmaOptions::pool_size, 1u << 20, 1ull << 36>},
    Setting{"rdma.max_pinned", &set_rdma_bytes<&RdmaOptions::max_pinned, 1u << 20, 1ull << 40>},
    Setting{"rdma.ports.min", &set_rdma_uint<&RdmaOptions::port_min, 0, 65535>},
    Setting{"rdma.ports.max", &set_rdma_uint<&RdmaOptions::port_max, 0, 65535>},
    Setting{"rdma.workers", &set_rdma_workers},
    Setting{"rdma.require_tls", &set_rdma_bool<&RdmaOptions::require_tls>},
    Setting{"tls.certificate", &set_tls_file<&TlsOptions::certificate>},
    Setting{"tls.key", &set_tls_file<&TlsOptions::key>},
    Setting{"tls.min_version", &set_tls_min_version},
    Setting{"tls.data_binding", &set_tls_data_binding},
    Setting{"anonymous.enabled", &set_bool<&DaemonOptions::anonymous_enabled>},
    Setting{"anonymous.root", &set_anonymous_root},
    Setting{"users", &set_users},
    Setting{"banner", &set_banner},
    Setting{"log.level", &set_log_level},
};

const Setting *find_setting(std::string_view path) {
    for (const auto &s : kSettings) {
        if (s.path == path) return &s;
    }
    return nullptr;
}

bool is_section(std::string_view path) {
    return std::any_of(kSettings.begin(), kSettings.end(), [&](const Setting &s) {
        return s.path.size() > path.size() && s.path.starts_with(path) && s.path[path.size()] == '.';
    });
}

// The keys allowed directly under prefix, for "expected one of" hints.
std::string keys_under(std::string_view prefix) {
    std::vector<std::string> keys;
    for (const auto &s : kSettings) {
        std::string_view rest = s.path;
        if (!prefix.empty()) {
            if (!(rest.starts_with(prefix) && rest.size() > prefix.size() && rest[prefix.size()] == '.')) continue;
            rest.remove_prefix(prefix.size() + 1);
        }
        std::string key(rest.substr(0, rest.find('.')));
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    std::string out;
    for (const auto &k : keys) out += (out.empty() ? "" : ", ") + k;
    return out;
}

Status apply_mapping(const YAML::Node &node, const KeyLocation &at, DaemonOptions &o, GivenKeys &given) {
    if (!node.IsMap()) {
        return fail(config_error(at, "expected a mapping of " + keys_under(at.path) + ", got " +
                                         describe_node(node)));
    }
    std::set<std::string> seen;
    for (const auto &kv : node) {
        if (!kv.first.IsScalar()) {
            return fail(config_error(at.child("?", kv.first.Mark()), "expected a plain key"));
        }
        const std::string &key = kv.first.Scalar();
        const KeyLocation key_at = at.child(key, kv.first.Mark());
        if (!seen.insert(key).second) return fail(config_error(key_at, "duplicate key"));
        given[key_at.path] = kv.first.Mark();

        if (const Setting *s = find_setting(key_at.path)) {
            if (auto ok = s->apply(kv.second, key_at, o); !ok) return ok;
        } else if (is_section(key_at.path)) {
            if (kv.second.IsNull()) continue;  // "limits:" with nothing under it changes nothing
            if (auto ok = apply_mapping(kv.second, key_at, o, given); !ok) return ok;
        } else {
            return fail(config_error(key_at, "unknown key (expected one of: " + keys_under(at.path) + ")"));
        }
    }
    return {};
}

KeyLocation given_location(const std::string &source, const GivenKeys &given, const std::string &path) {
    auto it = given.find(path);
    return KeyLocation{source, path, it == given.end() ? YAML::Mark::null_mark() : it->second};
}

// Fail-closed: a listener that must use TLS needs a certificate, and a
// certificate needs its key.
Status check_tls_rules(const DaemonOptions &o, const std::string &source, const GivenKeys &given) {
    if (o.tls.certificate.empty() != o.tls.key.empty()) {
        const std::string key = o.tls.certificate.empty() ? "tls.key" : "tls.certificate";
        return fail(config_error(given_location(source, given, key),
                                 "tls.certificate and tls.key go together: set both, or neither"));
    }
    if (o.tls.enabled()) return {};
    for (const ListenAddress &l : o.listen) {
        const std::string where = l.address + " port " + std::to_string(l.port);
        if (l.implicit_tls)
            return fail(config_error(given_location(source, given, "listen"),
                                     "the listener on " + where + " has implicit_tls but no tls.certificate is set"));
        if (requires_tls(l))
            return fail(config_error(given_location(source, given, "listen"),
                                     "the listener on " + where + " is not loopback, so passwords and data would "
                                     "cross the network in clear text: set tls.certificate and tls.key, or "
                                     "allow_plaintext: true on that listener if that is really meant"));
    }
    if (o.rdma.require_tls)
        return fail(config_error(given_location(source, given, "rdma.require_tls"),
                                 "rdma.require_tls needs tls.certificate and tls.key"));
    return {};
}

// Rules that involve more than one key, checked on the merged result. The
// error points at the key of this text that broke the rule.
Status check_cross_key_rules(const DaemonOptions &o, const std::string &source, const GivenKeys &given) {
    const bool any_port = o.passive_port_min == 0 && o.passive_port_max == 0;
    if (!any_port) {
        const std::string key = given.contains("passive_ports.min") ? "passive_ports.min" : "passive_ports.max";
        if (o.passive_port_min == 0 || o.passive_port_max == 0 || o.passive_port_min > o.passive_port_max) {
            return fail(config_error(given_location(source, given, key),
                                     "expected 1 <= passive_ports.min <= passive_ports.max <= 65535 (or both 0 "
                                     "for any port), got min " + std::to_string(o.passive_port_min) + ", max " +
                                         std::to_string(o.passive_port_max)));
        }
    }
    const bool any_rdma_port = o.rdma.port_min == 0 && o.rdma.port_max == 0;
    if (!any_rdma_port && (o.rdma.port_min == 0 || o.rdma.port_max == 0 || o.rdma.port_min > o.rdma.port_max)) {
        const std::string key = given.contains("rdma.ports.min") ? "rdma.ports.min" : "rdma.ports.max";
        return fail(config_error(given_location(source, given, key),
                                 "expected 1 <= rdma.ports.min <= rdma.ports.max <= 65535 (or both 0 for any "
                                 "port), got min " + std::to_string(o.rdma.port_min) + ", max " +
                                     std::to_string(o.rdma.port_max)));
    }
    if (o.rdma.pool_size < 2ull * 65536 || o.rdma.pool_size > o.rdma.max_pinned) {
        return fail(config_error(given_location(source, given, given.contains("rdma.pool_size") ? "rdma.pool_size" : "rdma.max_pinned"),
                                 "expected rdma.pool_size <= rdma.max_pinned, got " + std::to_string(o.rdma.pool_size) +
                                     " > " + std::to_string(o.rdma.max_pinned)));
    }
    if (auto ok = check_tls_rules(o, source, given); !ok) return ok;
    if (o.anonymous_enabled && o.anonymous_root.empty()) {
        return fail(config_error(given_location(source, given, "anonymous.enabled"),
                                 "anonymous login is enabled but anonymous.root is missing"));
    }
    return {};
}

}  // namespace

Status apply_config_document(const YAML::Node &document, const std::string &source, DaemonOptions &options) {
    DaemonOptions merged = options;  // options stay untouched when the text is rejected
    GivenKeys given;
    if (!document.IsNull()) {
        if (auto ok = apply_mapping(document, KeyLocation{source, "", document.Mark()}, merged, given); !ok) {
            return ok;
        }
    }
    if (auto ok = check_cross_key_rules(merged, source, given); !ok) return ok;
    options = std::move(merged);
    return {};
}

}  // namespace rftp::daemon
