// --json output: one JSON object per line on stdout, each written with a
// single write(2) so lines from the progress thread and the main flow never
// interleave. Schema in docs/cli.md.
#pragma once

#include <nlohmann/json.hpp>

namespace rftp::client {

void emit_json_event(const nlohmann::json &event);

// The errno of the first event that could not be written out (0: none).
int json_output_error();

}  // namespace rftp::client
