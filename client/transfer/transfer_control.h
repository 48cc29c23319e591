// The control-connection steps around one transfer, whatever carries its
// bytes: parallel streams agreed, HOLD, ABOR after a failure or Ctrl-C,
// how long a reply may take, what a data-path error means for the exit code.
#pragma once

#include <cstdint>
#include <optional>

#include "client/exit_codes.h"
#include "client/session.h"
#include "client/transfer/file_report.h"
#include "middleware/transfer_progress.h"
#include "protocol/parallel_option.h"

namespace rftp::client {

using ftp::ParallelGrant;

// A server may grant fewer streams and a smaller block than asked (or raise
// a block to its 64 KiB minimum), never more: each stream is a connection
// and a thread here, each block memory (OPTS PARALLEL, RADR).
bool grant_exceeds_request(uint64_t asked_streams, uint64_t asked_block, uint64_t streams, uint64_t block);

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

// Blocks that failed their CRC32C on the way were sent again (on TCP by
// the sender on the same connection, on RDMA by a new grant): the summary
// says how many, as a link that damages data deserves a look.
void note_blocks_resent(FileReport &report, const middleware::TransferProgress &progress);

// HOLD, right before an upload's STOR or RSTR (so no other command can
// leave it pending for a later one): rftpd keeps the upload aside as its
// partial file, complete, until COMT. Anything but 200 is a refusal.
OutcomeStatus hold_next_upload(Session &session);

}  // namespace rftp::client
