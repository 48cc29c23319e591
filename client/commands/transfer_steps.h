// Steps shared by get and put: binary mode, session preparation, SIZE, parallel negotiation,
// ABOR after an interrupt, digest verification, error classification.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/exit_codes.h"
#include "client/commands/file_report.h"
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

using ftp::ParallelGrant;

// A server may grant fewer streams and a smaller block than asked (or raise
// a block to its 64 KiB minimum), never more: each stream is a connection
// and a thread here, each block memory (OPTS PARALLEL, RADR).
bool grant_exceeds_request(uint64_t asked_streams, uint64_t asked_block, uint64_t streams, uint64_t block);

// --verify where the local side is stdout or a device: side is what would
// have to be read again ("download", "source").
// A remote name with CR, LF or NUL, refused before any command that readies
// its transfer (SRCE, ALLO, HOLD, REST): sent, those would be left for the
// next file's transfer command.
OutcomeStatus refuse_name_ftp_cannot_carry(const char *verb, const std::string &remote);
std::unexpected<Failure> refuse_verify_of_device(const char *side);

// OPTS PARALLEL n block; the reply states what the server put in force.
Outcome<ParallelGrant> negotiate_parallel(Session &session, unsigned streams, uint64_t block_size);

// OPTS PARALLEL 0: back to plain stream transfers on a reused session.
OutcomeStatus disable_parallel(Session &session);

// After an interrupted or failed transfer: ABOR and drain its replies, briefly.
void abort_transfer(Session &session);

// A data-path error from the middleware: local (disk full, I/O) or the connection.
ExitCode exit_for_data_error(const Error &error);

// How long to wait for a reply the server gives only once it has gone
// through bytes of a file, saying nothing meanwhile (HASH reads the file;
// a resumed upload's 150 comes after rftpd copied the prefix): --timeout,
// plus a second for every 50 MB, a slow disk's pace.
int timeout_after_reading(const Session &session, std::optional<uint64_t> bytes);

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

// Blocks that failed their CRC32C on the way were sent again (on TCP by
// the sender on the same connection, on RDMA by a new grant): the summary
// says how many, as a link that damages data deserves a look.
void note_blocks_resent(FileReport &report, const middleware::TransferProgress &progress);

// Fails early when --verify is asked of a server that cannot compute digests.
OutcomeStatus require_hash_for_verify(const Session &session);

// HOLD, right before an upload's STOR or RSTR (so no other command can
// leave it pending for a later one): rftpd keeps the upload aside as its
// partial file, complete, until COMT. Anything but 200 is a refusal.
OutcomeStatus hold_next_upload(Session &session);

}  // namespace rftp::client
