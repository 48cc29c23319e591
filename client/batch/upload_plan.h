// Which files a many-file put sends where, read from the local disk before
// anything is sent: every LOCAL file goes into the remote directory under its
// basename; with -r a LOCAL directory is recreated there, tree and all.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "client/batch/file_job.h"

namespace rftp::client {

struct UploadPlan {
    std::vector<std::string> remote_directories;  // parents before children
    std::vector<FileJob> files;
    std::vector<std::pair<FileJob, Failure>> failures;  // missing sources, directories without -r
};

// remote_dir is absolute and ends with '/'.
UploadPlan plan_upload(const std::vector<std::string> &sources, bool recursive, const std::string &remote_dir);

}  // namespace rftp::client
