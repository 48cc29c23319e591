// Two files of one run must never land at the same path: two downloads into
// one local file would write over each other's partial file and each rename
// the mix, and two uploads to one remote name would leave whichever finished
// last. Planning keeps the first file for each target and fails the others.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "client/batch/file_job.h"

namespace rftp::client {

// target: &FileJob::local for a get, &FileJob::remote for a put.
void refuse_shared_targets(std::vector<FileJob> &files, std::vector<std::pair<FileJob, Failure>> &failures,
                           std::string FileJob::*target);

}  // namespace rftp::client
