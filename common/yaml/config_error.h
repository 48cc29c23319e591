// Where in a config text a value came from, so every error can say
// "rftpd.yaml:12:5: limits.max_sessions: expected ..., got ...".
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::yaml {

struct KeyLocation {
    std::string source;   // file name or "<embedded default>"
    std::string path;     // key path: "limits.max_sessions", "users[1].root"
    YAML::Mark mark = YAML::Mark::null_mark();  // null when not from this text

    KeyLocation child(std::string_view key, const YAML::Mark &m) const;
    KeyLocation element(size_t index, const YAML::Mark &m) const;
};

// "source:line:col: path: what" (line/column left out for a null mark).
Error config_error(const KeyLocation &at, std::string_view what);

// A short, printable rendering of a node for "got ..." in messages.
std::string describe_node(const YAML::Node &node);

}  // namespace rftp::yaml
