// Typed readers for YAML scalars. Each checks the type and range of one value
// and, when it is wrong, returns an error naming file, line, key and what was
// expected. None of them throws (yaml-cpp's as<T>() would).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

#include "common/result.h"
#include "common/yaml/config_error.h"

namespace rftp::yaml {

// A plain decimal integer in [min, max].
Result<uint64_t> read_uint(const YAML::Node &node, const KeyLocation &at, uint64_t min, uint64_t max);

// true/false (also yes/no, on/off, as YAML 1.1 allows).
Result<bool> read_bool(const YAML::Node &node, const KeyLocation &at);

// Any scalar as text; an empty value ("key:") reads as "". Never holds NUL.
Result<std::string> read_string(const YAML::Node &node, const KeyLocation &at);

// An integer or a "64M"-style size (common/byte_size.h), in [min, max] bytes.
Result<uint64_t> read_byte_size(const YAML::Node &node, const KeyLocation &at, uint64_t min, uint64_t max);

// A non-empty absolute path. It need not exist yet.
Result<std::string> read_absolute_path(const YAML::Node &node, const KeyLocation &at);

// A numeric IPv4 or IPv6 address (no host names: resolving at start would
// make the daemon depend on DNS). ipv4_only for addresses sent in 227 replies.
Result<std::string> read_ip_address(const YAML::Node &node, const KeyLocation &at, bool ipv4_only = false);

// Text without control characters, at most max_len bytes (goes into replies).
Result<std::string> read_single_line(const YAML::Node &node, const KeyLocation &at, size_t max_len);

}  // namespace rftp::yaml
