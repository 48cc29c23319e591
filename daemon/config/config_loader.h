// Reads the YAML configuration into DaemonOptions. A file overlays the
// embedded default config, so it only needs the keys it changes. Unknown
// keys, wrong types and out-of-range values are errors that name the file,
// the line, the key and what was expected.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "daemon/config/options.h"

namespace rftp::daemon {

// The embedded default config, verbatim (conf/rftpd-default.yaml).
std::string_view embedded_default_config();

// Options from the embedded default alone.
Result<DaemonOptions> load_default_config();

// Embedded default, overlaid with the file at path.
Result<DaemonOptions> load_config_file(const std::string &path);

// Overlays YAML text on base. source names the text in error messages.
Result<DaemonOptions> apply_config_text(const DaemonOptions &base, std::string_view yaml,
                                        const std::string &source);

}  // namespace rftp::daemon
