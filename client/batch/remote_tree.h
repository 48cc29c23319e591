// Remote directories for many-file transfers: is a path a directory (CWD),
// make one unless it exists (MKD, then CWD to tell "exists" from a refusal),
// and list one (MLSD when FEAT offers MLST, else LIST read best effort).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "client/session.h"

namespace rftp::client {

// CWD path: 250 -> true, a refusal -> false. Every path rftp sends is
// absolute, so the changed working directory affects nothing else.
Outcome<bool> remote_is_directory(Session &session, const std::string &path);

// MKD path, succeeding also when the directory already exists.
OutcomeStatus ensure_remote_directory(Session &session, const std::string &path);

struct RemoteEntry {
    std::string name;  // one path component, never "", ".", ".." or containing '/'
    bool is_directory = false;
    std::optional<uint64_t> size;  // files: from MLSD's size fact or LIST's size column
};

// Files and subdirectories of path. Other types (symlinks, devices) are left
// out: rftp copies files and the directories holding them.
Outcome<std::vector<RemoteEntry>> list_remote_directory(Session &session, const std::string &path);

// One line of Unix-style LIST output ("drwxr-xr-x 2 u g 4096 Jan 01 12:00 name");
// false for anything else (totals, symlinks, unknown formats).
bool parse_unix_list_line(const std::string &line, RemoteEntry &entry);

// A name a server sent that is safe to use as one local path component.
bool is_safe_entry_name(const std::string &name);

}  // namespace rftp::client
