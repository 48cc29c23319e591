// SHA-256 of many files at once, for --compare checksum and check
// --checksum: local files read in parallel, remote ones asked with HASH
// (rftpd answers from the file, or from the digest a transfer just took).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "client/session.h"

namespace rftp::client {

// relative path -> lower-case hex, for each of paths under top, read on
// threads threads. A file that cannot be read fails the call (exit 6).
Outcome<std::map<std::string, std::string>> local_digests(const std::string &top, const std::vector<std::string> &paths,
                                                           unsigned threads);

// The same from the server, one HASH each over session.
Outcome<std::map<std::string, std::string>> remote_digests(Session &session, const std::string &top,
                                                           const std::vector<std::string> &paths);

}  // namespace rftp::client
