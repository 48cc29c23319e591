// Steps shared by get and put: binary mode, session preparation, SIZE, parallel negotiation,
// ABOR after an interrupt, digest verification, error classification.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/exit_codes.h"
#include "client/transfer/file_report.h"
#include "client/transfer/transfer_control.h"
#include "client/session.h"
#include "middleware/transfer_progress.h"
#include "protocol/parallel_option.h"

namespace rftp::client {

OutcomeStatus set_binary_mode(Session &session);

// What every transfer session needs before its first file: HASH when
// --verify is asked (fails early otherwise), OPTS BLOCKSUM NONE with
// --no-block-checksums (session.block_checksums says what was agreed), then TYPE I.
OutcomeStatus prepare_transfer_session(Session &session, const Options &options);

struct SizeProbe {
    std::optional<uint64_t> size;  // set on 213; absent on any refusal (no such file, not offered)
    ftp::Reply reply;              // kept so a refusal can be reported as the server worded it
};

// SIZE path; only a broken connection or an unreadable 213 is an error.
Outcome<SizeProbe> probe_size(Session &session, const std::string &path);

// --verify where the local side is stdout or a device: side is what would
// have to be read again ("download", "source").
// A remote name with CR, LF or NUL, refused before any command that readies
// its transfer (SRCE, ALLO, HOLD, REST): sent, those would be left for the
// next file's transfer command.
OutcomeStatus refuse_name_ftp_cannot_carry(const char *verb, const std::string &remote);
std::unexpected<Failure> refuse_verify_of_device(const char *side);

// HASH path -> lower-case SHA-256 hex; clear error when the server lacks HASH.
Outcome<std::string> remote_sha256(Session &session, const std::string &path);

// The local side's SHA-256 for --verify, asked for once the server's is in.
using LocalDigest = std::function<Outcome<std::string>()>;

// The local side's digest as the transfer took it (said at debug level).
Outcome<std::string> taken_local_sha256(const std::string &taken, const std::string &path);

// fd's first size bytes' SHA-256, read until Ctrl-C (reading a terabyte
// takes minutes): the caller asks interrupted() and exits 130.
Result<std::string> sha256_until_interrupted(int fd, uint64_t size);

// The local side's digest read again: fd's first size bytes (path names it).
Outcome<std::string> read_local_sha256(int fd, uint64_t size, const std::string &path);

// --verify: the server's digest of remote_path must equal the local one.
OutcomeStatus verify_digest(Session &session, const std::string &remote_path, const LocalDigest &local_digest);

// A --verify mismatch of a file -c found complete and skipped (at where):
// not this run's to remove, and -c would skip it again, so the message says
// to run `again` without it.
std::unexpected<Failure> skipped_file_differs(Failure mismatch, const std::string &where, const std::string &again);

// The same, with the local file's digest taken_during_transfer where the
// transfer took it, else read from local_path (the whole file).
OutcomeStatus verify_digest(Session &session, const std::string &remote_path, const std::string &local_path,
                            const std::optional<std::string> &taken_during_transfer = std::nullopt);

// Fails early when --verify is asked of a server that cannot compute digests.
OutcomeStatus require_hash_for_verify(const Session &session);

}  // namespace rftp::client
