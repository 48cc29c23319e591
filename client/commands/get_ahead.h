// A many-file download's next file, begun before the one before it ends:
// its SIZE and RETR go out once the current file's data has moved, and wait
// at rftpd behind that transfer (docs/protocol.md, "Files in a row").
#pragma once

#include "client/batch/file_job.h"
#include "client/cli/options.h"
#include "client/session.h"

namespace rftp::client {

// Whether get_one_file, given next, will send SIZE and then RETR and no
// other command before them: the listing gave its size and time, it takes
// the streams kept, and no -c, --verify or RDMA channel asks for more.
bool downloads_with_size_and_retr_alone(const Session &session, const Options &o, const FileJob &next);

// Sends next's SIZE and RETR ahead when the above holds; else nothing.
void send_get_ahead(Session &session, const Options &o, const FileJob &next);

}  // namespace rftp::client
