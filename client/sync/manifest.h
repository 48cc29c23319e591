// A manifest: what a tree holds, one line per file (path, size,
// modification time, SHA-256), written by sync --manifest and read by
// check --manifest. Format (docs/cli.md "Manifests"):
// - TSV: a first line "# rftp manifest 1", then "path<TAB>size<TAB>modify
//   <TAB>sha256" per file; modify is an RFC 3659 time-val (UTC) and either
//   it or sha256 may be "-" (unknown). In a path, '\' is written "\\", a tab
//   "\t", a newline "\n" and a carriage return "\r".
// - JSON lines (with --json): {"path", "size", "modify", "sha256"} per line,
//   an unknown value null.
// Lines are sorted by path, so two manifests of one tree are equal files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/exit_codes.h"

namespace rftp::client {

struct ManifestEntry {
    std::string path;
    uint64_t size = 0;
    std::optional<int64_t> mtime;       // whole seconds, UTC
    std::optional<std::string> sha256;  // lower-case hex
};

// Written to "file.rftp-part" and renamed into place, as every rftp output.
OutcomeStatus write_manifest(const std::string &file, std::vector<ManifestEntry> entries, bool json_lines);

// Either format (JSON lines start with '{'); a bad line fails with its number.
Outcome<std::vector<ManifestEntry>> read_manifest(const std::string &file);

}  // namespace rftp::client
