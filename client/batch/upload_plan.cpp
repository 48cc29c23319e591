#include "client/batch/upload_plan.h"

#include <filesystem>
#include <system_error>
#include <utility>
#include <vector>

#include "client/batch/shared_targets.h"
#include "common/log.h"

namespace fs = std::filesystem;

namespace rftp::client {
namespace {

// "data/", "./data", "/abs/data" -> "data"; "." -> the current directory's name.
std::string source_name(const std::string &source) {
    fs::path p = fs::absolute(fs::path(source)).lexically_normal();
    if (!p.has_filename()) p = p.parent_path();
    return p.filename().string();
}

std::optional<uint64_t> size_of(const fs::directory_entry &entry) {
    std::error_code ec;
    uint64_t size = entry.file_size(ec);
    if (ec) return std::nullopt;
    return size;
}

void read_directory_failed(UploadPlan &plan, const fs::path &dir, const std::string &remote, const std::error_code &ec) {
    plan.failures.push_back(
        {FileJob{dir.string(), remote}, Failure{ExitCode::local_file, "read directory " + dir.string() + ": " + ec.message()}});
}

// Directory by directory, so one that cannot be read (EACCES) is a failure
// of its own and the rest of the tree is still sent: a recursive iterator
// ends the whole walk at the first such error.
void add_tree(UploadPlan &plan, const std::string &source, const std::string &remote_root) {
    plan.remote_directories.push_back(remote_root);
    std::vector<std::pair<fs::path, std::string>> pending{{fs::path(source), remote_root}};
    while (!pending.empty()) {
        auto [dir, remote_dir] = std::move(pending.back());
        pending.pop_back();
        std::error_code ec;
        fs::directory_iterator it(dir, ec), end;
        for (; !ec && it != end; it.increment(ec)) {
            const fs::path &path = it->path();
            // By the entry's own name: fs::relative would resolve a symlinked
            // file to where it points, and send it there (even outside the tree).
            std::string remote = remote_dir + "/" + path.filename().string();
            std::error_code type_ec;
            const bool link = it->is_symlink(type_ec);
            // A link to nothing (its target not mounted here, say) is a file
            // the tree names and rftp cannot send: a failed file, as the same
            // link given as a source is, not a warning and exit 0.
            if (link && !fs::exists(it->status(type_ec))) {
                std::error_code target_ec;
                const fs::path target = fs::read_symlink(path, target_ec);
                plan.failures.push_back(
                    {FileJob{path.string(), remote},
                     Failure{ExitCode::local_file, "open " + path.string() + ": a symbolic link to " +
                                                       (target_ec ? std::string("?") : target.string()) +
                                                       ", which does not exist"}});
            // A symlinked directory inside a tree could loop back on itself,
            // so it is not entered; say so rather than send it empty.
            } else if (link && it->is_directory(type_ec)) {
                log::warning("skipping " + path.string() + ": symlink to a directory");
            } else if (it->is_directory(type_ec)) {
                plan.remote_directories.push_back(remote);
                pending.emplace_back(path, remote);
            } else if (it->is_regular_file(type_ec)) {
                plan.files.push_back(FileJob{path.string(), remote, size_of(*it)});
            } else {
                log::warning("skipping " + path.string() + ": not a regular file or directory");
            }
        }
        if (ec) read_directory_failed(plan, dir, remote_dir, ec);
    }
}

}  // namespace

UploadPlan plan_upload(const std::vector<std::string> &sources, bool recursive, const std::string &remote_dir) {
    UploadPlan plan;
    for (const auto &source : sources) {
        std::string name = source_name(source);
        FileJob job{source, remote_dir + name};
        std::error_code ec;
        auto status = fs::status(source, ec);
        if (ec || !fs::exists(status)) {
            plan.failures.push_back({job, Failure{ExitCode::local_file, "open " + source + ": " +
                                                  (ec ? ec.message() : std::string("No such file or directory"))}});
        } else if (fs::is_regular_file(status)) {
            job.size = size_of(fs::directory_entry(source, ec));
            plan.files.push_back(job);
        } else if (fs::is_directory(status) && recursive && !name.empty()) {
            add_tree(plan, source, remote_dir + name);
        } else if (fs::is_directory(status)) {
            plan.failures.push_back({job, Failure{ExitCode::local_file, source + " is a directory (use -r to send the tree)"}});
        } else {
            plan.failures.push_back({job, Failure{ExitCode::local_file, source + " is not a regular file"}});
        }
    }
    refuse_shared_targets(plan.files, plan.failures, &FileJob::remote);
    return plan;
}

}  // namespace rftp::client
