#include "common/yaml/yaml_values.h"

#include <arpa/inet.h>

#include <charconv>

#include "common/decimal.h"
#include "common/byte_size.h"

namespace rftp::yaml {
namespace {

std::unexpected<Error> expected_but_got(const KeyLocation &at, std::string_view expected,
                                        const YAML::Node &node) {
    return fail(config_error(at, "expected " + std::string(expected) + ", got " + describe_node(node)));
}

std::string range_text(uint64_t min, uint64_t max) {
    return std::to_string(min) + ".." + std::to_string(max);
}

}  // namespace

Result<uint64_t> read_uint(const YAML::Node &node, const KeyLocation &at, uint64_t min, uint64_t max) {
    const std::string what = "an integer in " + range_text(min, max);
    if (!node.IsScalar()) return expected_but_got(at, what, node);
    const std::string &s = node.Scalar();
    auto value = parse_decimal(s, max);
    if (!value || *value < min) return expected_but_got(at, what, node);
    return *value;
}

Result<bool> read_bool(const YAML::Node &node, const KeyLocation &at) {
    if (node.IsScalar()) {
        const std::string &s = node.Scalar();
        for (const char *t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
            if (s == t) return true;
        }
        for (const char *f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
            if (s == f) return false;
        }
    }
    return expected_but_got(at, "true or false", node);
}

Result<std::string> read_string(const YAML::Node &node, const KeyLocation &at) {
    if (node.IsNull()) return std::string();
    if (!node.IsScalar()) return expected_but_got(at, "a string", node);
    // A "\0" escape would silently cut the value short at every C API.
    if (node.Scalar().find('\0') != std::string::npos) {
        return fail(config_error(at, "expected a string without NUL bytes"));
    }
    return node.Scalar();
}

Result<uint64_t> read_byte_size(const YAML::Node &node, const KeyLocation &at, uint64_t min, uint64_t max) {
    const std::string what = "a size in bytes (integer or e.g. \"64M\") in " + range_text(min, max);
    if (!node.IsScalar()) return expected_but_got(at, what, node);
    auto value = parse_byte_size(node.Scalar());
    if (!value || *value < min || *value > max) return expected_but_got(at, what, node);
    return *value;
}

Result<std::string> read_absolute_path(const YAML::Node &node, const KeyLocation &at) {
    auto text = read_string(node, at);
    if (!text) return text;
    if (text->empty()) return fail(config_error(at, "missing: expected an absolute directory path"));
    if (text->front() != '/') return expected_but_got(at, "an absolute path (starting with /)", node);
    return text;
}

Result<std::string> read_ip_address(const YAML::Node &node, const KeyLocation &at, bool ipv4_only) {
    const char *what = ipv4_only ? "a numeric IPv4 address" : "a numeric IPv4 or IPv6 address";
    auto text = read_string(node, at);
    if (!text) return text;
    unsigned char buf[sizeof(struct in6_addr)];
    bool ok = inet_pton(AF_INET, text->c_str(), buf) == 1 ||
              (!ipv4_only && inet_pton(AF_INET6, text->c_str(), buf) == 1);
    if (!ok) return expected_but_got(at, what, node);
    return text;
}

Result<std::string> read_single_line(const YAML::Node &node, const KeyLocation &at, size_t max_len) {
    auto text = read_string(node, at);
    if (!text) return text;
    for (unsigned char c : *text) {
        if (c < 0x20 || c == 0x7f) {
            return expected_but_got(at, "one line of text without control characters", node);
        }
    }
    if (text->size() > max_len) {
        return expected_but_got(at, "at most " + std::to_string(max_len) + " bytes", node);
    }
    return text;
}

}  // namespace rftp::yaml
