// Small helpers every command handler uses to turn a client's path into a
// safe virtual path and a file-system error into the right FTP reply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "common/unique_fd.h"
#include "protocol/discard_path.h"

namespace rftp::daemon {

class Session;

// The argument resolved against the working directory, or nullopt after
// replying 501/553 for a path that cannot be valid.
std::optional<std::string> resolve_or_reply(Session &s, const std::string &argument);

struct FtpReply {
    int code;
    std::string text;
};

// The reply (550/452/553...) fit for the client, from an Error whose code is
// a negative errno; reply_fs_error sends it.
FtpReply fs_error_reply(const Error &e);
void reply_fs_error(Session &s, const Error &e);

// A path inside a 257 reply: enclosed in double quotes, inner quotes doubled (RFC 959).
std::string quote_257(const std::string &path);

// A plain file opened for RETR/RRTR, with its size.
struct RetrieveSource {
    UniqueFd fd;
    uint64_t size = 0;
};
// Opens vpath for reading and checks the REST offset against its size;
// nullopt after replying 550/554 (or what the file system said).
std::optional<RetrieveSource> open_for_retrieve(Session &s, const std::string &vpath, uint64_t rest);

// What REST and ALLO set for "the next transfer". Every transfer command
// takes it first thing, so a refused one (bad path, no permission) leaves
// nothing behind for a later, unrelated command.
struct PendingTransfer {
    uint64_t rest = 0;
    std::optional<uint64_t> allocate;
    std::optional<std::string> source;
    bool hold = false;  // HOLD
};
PendingTransfer take_pending_transfer(Session &s);

// " blocksum=crc32c" or " blocksum=none" for a framed or RDMA transfer's log line.
inline const char *blocksum_field(bool block_checksums) {
    return block_checksums ? " blocksum=crc32c" : " blocksum=none";
}

using ftp::kDiscardPath;  // protocol/discard_path.h

}  // namespace rftp::daemon
