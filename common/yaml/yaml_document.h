// The one YAML document of a config text. yaml-cpp 0.7 (Debian 12) loops
// forever, allocating at every turn, on a stream its parser cannot get
// past, such as one that starts with ',': YAML::LoadAll hands out the same
// empty document again and again (yaml-cpp issue 1040, fixed after 0.8).
// A config file is the operator's, but a typo must not take a machine's
// memory: the documents are counted first, and a parser that starts a
// document where the last one started is stopped with an error.
#pragma once

#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "common/result.h"

namespace rftp::yaml {

// The document text holds (a null node for an empty text). A second
// document is an error naming how many there are: rftpd reads one.
// Syntax errors still come as YAML::Exception, as from YAML::Load.
Result<YAML::Node> load_one_document(std::string_view text, const std::string &source);

}  // namespace rftp::yaml
