// Steps shared by get and put: binary mode, session preparation, SIZE, parallel negotiation,
// ABOR after an interrupt, digest verification, error classification.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/exit_codes.h"
#include "client/commands/file_report.h"
#include "client/session.h"

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

struct ParallelGrant {
    unsigned streams = 1;
    uint64_t block_size = 8ull << 20;
};

// OPTS PARALLEL n block; the reply states what the server put in force.
Outcome<ParallelGrant> negotiate_parallel(Session &session, unsigned streams, uint64_t block_size);

// OPTS PARALLEL 0: back to plain stream transfers on a reused session.
OutcomeStatus disable_parallel(Session &session);

// After an interrupted or failed transfer: ABOR and drain its replies, briefly.
void abort_transfer(Session &session);

// A data-path error from the middleware: local (disk full, I/O) or the connection.
ExitCode exit_for_data_error(const Error &error);

// HASH path -> lower-case SHA-256 hex; clear error when the server lacks HASH.
Outcome<std::string> remote_sha256(Session &session, const std::string &path);

// --verify: the server's digest of remote_path must equal the local file's:
// taken_during_transfer where the transfer took it, else read from local_path.
OutcomeStatus verify_digest(Session &session, const std::string &remote_path, const std::string &local_path,
                            const std::optional<std::string> &taken_during_transfer = std::nullopt);

// A block that fails its CRC32C check on a TCP transfer ends it, with only
// the good prefix kept on the receiving side; the file is then resumed from
// there (over RDMA the channel resends the block itself). As over RDMA,
// the bound is per block: the same block failing a fourth time ends the
// file, so a long transfer over a link that damages a block now and then
// goes through. kChecksumResumesPerFile caps the whole file all the same.
inline constexpr unsigned kChecksumResumes = 3;
inline constexpr unsigned kChecksumResumesPerFile = 64;

class ChecksumRetries {
public:
    // Whether to resume after this failure (a TCP block's CRC32C, within bounds).
    bool resume_after(const Failure &failure, const FileReport &report);

private:
    unsigned total_ = 0;
    std::map<uint64_t, unsigned> by_offset_;  // failures per damaged block (by its byte offset)
};

// Runs attempt(o); while it fails on a damaged TCP block within those
// bounds, notes why and runs it again continuing this run's own partial
// file. what names the file in the warning ("put /dir/name").
OutcomeStatus with_checksum_resumes(const Options &o, const std::string &what, FileReport &report,
                                    const std::function<OutcomeStatus(const Options &)> &attempt);

// Fails early when --verify is asked of a server that cannot compute digests.
OutcomeStatus require_hash_for_verify(const Session &session);

// "dir/name" -> "dir/.name.rftp-part" (docs/protocol.md "Uploads").
std::string remote_partial_name(const std::string &path);

std::string basename_of(const std::string &path);

}  // namespace rftp::client
