#include "client/batch/download_plan.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "client/batch/remote_tree.h"
#include "client/batch/shared_targets.h"

namespace rftp::client {
namespace {

// "/a/b/" -> "b"; "/" -> "".
std::string last_component(std::string path) {
    while (path.size() > 1 && path.ends_with('/')) path.pop_back();
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string &dir, const std::string &name) {
    return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

// A session failure (connection lost, interrupted) ends planning; anything
// else is recorded against the directory and planning goes on.
bool is_fatal(const Failure &f) { return f.exit == ExitCode::connection || f.exit == ExitCode::interrupted; }

// Deeper than any real dataset; stops a server whose listing loops (a
// directory symlink to an ancestor) from sending rftp down forever.
constexpr int kMaxDepth = 64;

OutcomeStatus add_tree(Session &session, DownloadPlan &plan, const std::string &remote_dir, const std::string &local_dir,
                       int depth = 0) {
    if (depth > kMaxDepth) {
        plan.failures.push_back({FileJob{local_dir, remote_dir},
                                 Failure{ExitCode::remote_file, remote_dir + ": more than " + std::to_string(kMaxDepth) +
                                                                    " directory levels; not followed"}});
        return {};
    }
    if (::mkdir(local_dir.c_str(), 0755) < 0 && errno != EEXIST) {
        plan.failures.push_back({FileJob{local_dir, remote_dir},
                                 Failure{ExitCode::local_file, "mkdir " + local_dir + ": " + std::strerror(errno)}});
        return {};
    }
    struct stat st {};
    if (::stat(local_dir.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) {
        plan.failures.push_back({FileJob{local_dir, remote_dir},
                                 Failure{ExitCode::local_file, local_dir + " exists and is not a directory"}});
        return {};
    }
    auto entries = list_remote_directory(session, remote_dir);
    if (!entries) {
        if (is_fatal(entries.error())) return std::unexpected(entries.error());
        plan.failures.push_back({FileJob{local_dir, remote_dir}, entries.error()});
        return {};
    }
    for (const auto &e : *entries) {
        std::string remote = join(remote_dir, e.name);
        std::string local = join(local_dir, e.name);
        if (!e.is_directory) {
            plan.files.push_back(FileJob{local, remote, e.size});
            continue;
        }
        if (auto ok = add_tree(session, plan, remote, local, depth + 1); !ok) return ok;
    }
    return {};
}

}  // namespace

Outcome<DownloadPlan> plan_download(Session &session, const std::vector<std::string> &remote_paths, bool recursive,
                                    const std::string &local_dir) {
    DownloadPlan plan;
    for (const auto &remote : remote_paths) {
        std::string name = last_component(remote);
        std::string local = name.empty() || name == "/" ? local_dir : join(local_dir, name);
        if (recursive) {
            auto is_dir = remote_is_directory(session, remote);
            if (!is_dir) return std::unexpected(is_dir.error());
            if (*is_dir) {
                if (auto ok = add_tree(session, plan, remote, local); !ok) return std::unexpected(ok.error());
                continue;
            }
        }
        if (name.empty() || name == "/" || remote.ends_with('/')) {
            plan.failures.push_back({FileJob{local, remote},
                                     Failure{ExitCode::usage, remote + " names a directory (use -r to fetch the tree)"}});
            continue;
        }
        plan.files.push_back(FileJob{local, remote});
    }
    refuse_shared_targets(plan.files, plan.failures, &FileJob::local);
    return plan;
}

}  // namespace rftp::client
