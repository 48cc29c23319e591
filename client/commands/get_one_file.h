// Downloads one file over an already logged-in session (TYPE I set, and
// HASH checked when --verify): the single-file `rftp get` and every session
// thread of a many-file get call this, so each file follows the same rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "client/cli/options.h"
#include "client/transfer/file_report.h"
#include "client/exit_codes.h"
#include "client/session.h"
#include "protocol/partial_names.h"

namespace rftp::client {

struct Destination {
    std::string final_path;  // empty for stdout
    std::string write_path;  // where bytes go: the partial file, the device, or empty for stdout
    bool direct = false;     // stdout or a device: no partial file, no rename, no resume
};

// local: "-", a file, a directory (the remote basename is appended) or a device.
Outcome<Destination> choose_destination(const std::string &local, const std::string &remote_path);
// path exactly, as a many-file get plans it: a directory there is an error,
// never a place to put the file under its basename.
Outcome<Destination> destination_at(const std::string &path);

// What a directory listing said of the file (a many-file get).
struct ListedFacts {
    std::optional<uint64_t> size;       // stands in for SIZE on a server without it
    std::optional<std::string> modify;  // saves an MDTM
};

// A regular file is written to "LOCAL.rftp-part" and renamed onto LOCAL only
// when every byte arrived and the count matches the server's SIZE (and, with
// --verify, the SHA-256). With -c a partial file is continued, unless the
// remote file changed since (size or modification time,
// client/commands/partial_identity.h), and a LOCAL that already has SIZE
// bytes is reported skipped.
OutcomeStatus get_one_file(Session &session, const Options &o, const std::string &remote, const Destination &dest,
                           const FileProgressHooks &hooks, FileReport &report, const ListedFacts &listed = {});

}  // namespace rftp::client
