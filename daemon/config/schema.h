// The YAML schema of the daemon config: which key sets which field of
// DaemonOptions, with what type and range. Keys mirror the struct, nested and
// snake_case (docs/config.md lists them all).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "common/result.h"
#include "daemon/config/options.h"

namespace rftp::daemon {

// Overlays the settings present in document (a parsed YAML mapping, or null
// for an empty text) on options, then checks the rules that span keys.
// Lists (listen, users) replace the whole list; mappings overlay key by key.
// source names the text in error messages.
Status apply_config_document(const YAML::Node &document, const std::string &source, DaemonOptions &options);

}  // namespace rftp::daemon
