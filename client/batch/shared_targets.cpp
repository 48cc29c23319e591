#include "client/batch/shared_targets.h"

#include <filesystem>
#include <unordered_map>

namespace rftp::client {

void refuse_shared_targets(std::vector<FileJob> &files, std::vector<std::pair<FileJob, Failure>> &failures,
                           std::string FileJob::*target) {
    const bool local = target == &FileJob::local;
    std::string FileJob::*source = local ? &FileJob::remote : &FileJob::local;
    std::unordered_map<std::string, std::string> first_source;  // normalised target -> the file that has it
    std::vector<FileJob> kept;
    kept.reserve(files.size());
    for (FileJob &job : files) {
        std::string key = std::filesystem::path(job.*target).lexically_normal().generic_string();
        auto [at, fresh] = first_source.emplace(key, job.*source);
        if (fresh) {
            kept.push_back(std::move(job));
            continue;
        }
        std::string message = job.*source + " and " + at->second + " would both be " +
                              (local ? "saved as " : "stored as ") + job.*target + "; " +
                              (local ? "fetch them into separate directories" : "send them to separate directories");
        failures.push_back({std::move(job), Failure{ExitCode::usage, std::move(message)}});
    }
    files = std::move(kept);
}

}  // namespace rftp::client
