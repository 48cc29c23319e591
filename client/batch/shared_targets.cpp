#include "client/batch/shared_targets.h"

#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "client/commands/get_one_file.h"
#include "protocol/partial_names.h"

namespace rftp::client {

void refuse_shared_targets(std::vector<FileJob> &files, std::vector<std::pair<FileJob, Failure>> &failures,
                           std::string FileJob::*target) {
    const bool local = target == &FileJob::local;
    std::string FileJob::*source = local ? &FileJob::remote : &FileJob::local;
    // A download also writes its partial file and journal beside the
    // target: a remote "x.rftp-part" beside "x" would land on x's partial.
    auto paths_of = [&](const std::string &key) {
        std::vector<std::string> paths{key};
        if (local) paths.push_back(ftp::client_partial_name(key)), paths.push_back(ftp::client_journal_name(key));
        return paths;
    };
    struct Owner {
        std::string source;  // the file whose target, or partial download, is at this path
        std::string key;     // that file's own target
    };
    std::unordered_map<std::string, Owner> owner;  // normalised path -> who uses it
    std::vector<FileJob> kept;
    kept.reserve(files.size());
    for (FileJob &job : files) {
        std::string key = std::filesystem::path(job.*target).lexically_normal().generic_string();
        auto paths = paths_of(key);
        auto clash = std::find_if(paths.begin(), paths.end(), [&](const std::string &p) { return owner.contains(p); });
        if (clash == paths.end()) {
            for (auto &p : paths) owner.emplace(std::move(p), Owner{job.*source, key});
            kept.push_back(std::move(job));
            continue;
        }
        const Owner &other = owner.at(*clash);
        std::string message;
        if (*clash == key && other.key == key)
            message = job.*source + " and " + other.source + " would both be " + (local ? "saved as " : "stored as ") +
                      job.*target;
        else if (*clash == key)
            message = job.*source + " would be saved as " + job.*target + ", where " + other.source +
                      " keeps its partial download";
        else
            message = job.*source + " would keep its partial download at " + *clash + ", which " + other.source +
                      " uses";
        message += local ? "; fetch them into separate directories" : "; send them to separate directories";
        failures.push_back({std::move(job), Failure{ExitCode::usage, std::move(message)}});
    }
    files = std::move(kept);
}

}  // namespace rftp::client
