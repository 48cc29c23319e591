// Where `put -c` continues an earlier upload, and whether the bytes already
// on the server are this local file's beginning: rftpd's partial upload
// records which local file it began from (SRCE, MLST's X.rftp-source), and
// a shorter file under the final name is compared by digest
// (docs/protocol.md "Uploads").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/transfer/file_report.h"
#include "client/commands/put_one_file.h"
#include "client/exit_codes.h"
#include "client/session.h"

namespace rftp::client {

// Uploads this large announce their size first (ALLO) and name their
// source (SRCE): a round trip is nothing next to them, and small files
// (thousands a second) skip both.
inline constexpr uint64_t kAnnounceSizeFrom = 8ull << 20;

// Whether rftpd records this upload's source (SRCE) on its partial file.
// Only uploads that also announce their size: a round trip is nothing next
// to them, and a smaller partial is sent again whole rather than trusted.
bool records_source(const Session &session, const UploadSource &source);

// Where put -c continues an earlier upload.
struct ResumePoint {
    uint64_t offset = 0;
    // Bytes rftpd copies before it answers the upload's first reply: to
    // continue a shorter final file it copies that into a new partial first
    // (the final name keeps the old version until the new one is whole).
    uint64_t copied_first = 0;
};

// nullopt when the server already has it all. Says in report's notes why
// bytes on the server are not continued.
Outcome<std::optional<ResumePoint>> resume_offset(FileReport &report, Session &session, const std::string &remote,
                                                  const UploadSource &source);

}  // namespace rftp::client
