// A many-file transfer's next file, begun before the one before it ends:
// once the current file's 150 is read, the next file's commands go out and
// wait at rftpd behind that transfer, to run on its kept connections (or
// the session's RDMA channel) as soon as it ends with 226
// (docs/protocol.md, "Files in a row").
//
// Only when every command the per-file function will send before the data
// is known in advance; anything else would take a reply meant for another
// command. FtpConnection catches what still differs (drain_ahead).
#pragma once

#include <cstdint>
#include <optional>

#include "client/batch/file_job.h"
#include "client/cli/options.h"
#include "client/session.h"

namespace rftp::client {

// Whether get_one_file will send next's SIZE, then its RETR (RRTR over the
// RDMA channel), and nothing else before them: the listing gave its size
// and time, it takes the streams kept or the channel up, and no -c,
// --verify, OPTS PARALLEL or RADR asks for more.
bool downloads_with_size_and_retr_alone(const Session &session, const Options &o, const FileJob &next);

// Whether put_one_file will send next's ALLO and STOR (RSTR alone over the
// RDMA channel) and nothing before them: a file below the size that asks
// SRCE, the streams kept or the channel up, no -c or --verify. The file's
// size, or nothing.
std::optional<uint64_t> uploads_with_allo_and_stor(const Session &session, const Options &o, const FileJob &next);

// Only behind a file smaller than this. The next file's transfer starts at
// the server once the current one ends; its data then waits for this side
// to sync and rename the current file. For a large file that could outlast
// the server's data timeout, and the round trip saved matters little there.
inline constexpr uint64_t kAheadOfFilesBelow = 8ull << 20;

// Downloads go without the echo on a TCP session that agreed to it
// (docs/protocol.md, "Downloads of one block without the echo"): the
// server then starts each file the moment the one before it is sent, and
// only files whose commands are there already. With n ahead, a session
// moves up to n + 1 files a round trip, so the window grows with the
// path: one file per kPathMicrosPerFileAhead of the control connection's
// round trip (about what rftpd spends on a small file), between
// kLeastFilesAhead and kMostFilesAhead. A file is kLinesPerFileAhead
// lines, and the window keeps to half of the commands the server lets
// wait (FEAT's PIPELINE; kUnsaidPipeline where it does not say).
inline constexpr std::size_t kLeastFilesAhead = 4;
inline constexpr std::size_t kMostFilesAhead = 64;
inline constexpr uint32_t kPathMicrosPerFileAhead = 1000;
inline constexpr std::size_t kLinesPerFileAhead = 2;  // SIZE, RETR
inline constexpr unsigned kUnsaidPipeline = 64;
std::size_t unechoed_window(uint32_t control_rtt_us, unsigned pipeline_max);
// How many files a download session sends ahead at once: unechoed_window
// so, else one (each file waits for its echo or file_done anyway).
std::size_t get_ahead_window(const Session &session, const Options &o);

// Send next's commands ahead, while current moves, when the above holds;
// else nothing. true: sent. current: the file right before next.
bool send_get_ahead(Session &session, const Options &o, const FileJob &current, const FileJob &next);
bool send_put_ahead(Session &session, const Options &o, const FileJob &current, const FileJob &next);

}  // namespace rftp::client
