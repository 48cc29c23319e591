// --json output: one JSON object per line on stdout, each written with a
// single write(2) so lines from the progress thread and the main flow never
// interleave. Schema in docs/cli.md.
#pragma once

#include <nlohmann/json.hpp>

namespace rftp::client {

// A failed write is remembered (client/stdout_output.h).
void emit_json_event(const nlohmann::json &event);

}  // namespace rftp::client
