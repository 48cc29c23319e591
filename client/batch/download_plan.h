// Which files a many-file get fetches where: every URL's file goes into the
// local directory under its basename; with -r a remote directory is listed
// (recursively) and recreated locally, directories made as they are found.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "client/batch/file_job.h"
#include "client/session.h"

namespace rftp::client {

struct DownloadPlan {
    std::vector<FileJob> files;
    std::vector<std::pair<FileJob, Failure>> failures;  // unlistable directories, local mkdir failures
};

// remote_paths are absolute; local_dir is an existing directory. Only a lost
// session is an error; a refusal is a failure of the files it concerns.
Outcome<DownloadPlan> plan_download(Session &session, const std::vector<std::string> &remote_paths, bool recursive,
                                    const std::string &local_dir);

}  // namespace rftp::client
