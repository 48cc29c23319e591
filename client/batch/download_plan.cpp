#include "client/batch/download_plan.h"

#include <sys/stat.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "client/batch/remote_tree.h"
#include "client/batch/tree_bounds.h"
#include "client/batch/shared_targets.h"
#include "common/log.h"

namespace rftp::client {
namespace {

// "/a/b/" -> "b"; "/" -> ""; "/a/b/.." -> "a": the local name a remote path
// gets, never "." or "..", which would put the copy beside or above the
// local directory.
std::string last_component(const std::string &remote) {
    std::string path = std::filesystem::path(remote).lexically_normal().generic_string();
    while (path.size() > 1 && path.ends_with('/')) path.pop_back();
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string join(const std::string &dir, const std::string &name) {
    return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

// One `get -r` of one remote directory. A session failure (connection
// lost, interrupted) ends planning; anything else is recorded against the
// directory and planning goes on.
struct TreeWalk {
    Session &session;
    DownloadPlan &plan;
    std::string target;  // the local directory the user named
    std::size_t entries = 0;
    bool stopped = false;            // the entry bound was hit: nothing more is listed
    std::vector<std::string> above;  // unique facts of the directories being listed, outermost first

    OutcomeStatus add(const std::string &remote_dir, const std::string &local_dir, int depth);
    OutcomeStatus add_entries(const std::vector<RemoteEntry> &listed, const std::string &remote_dir,
                              const std::string &local_dir, int depth);
    void fail(const std::string &local, const std::string &remote, Failure failure) {
        plan.failures.push_back({FileJob{local, remote}, std::move(failure)});
    }
    void fail(const std::string &local, const std::string &remote, ExitCode exit, std::string message) {
        fail(local, remote, Failure{exit, std::move(message)});
    }
};

OutcomeStatus TreeWalk::add(const std::string &remote_dir, const std::string &local_dir, int depth) {
    if (depth > kMaxTreeDepth) {
        fail(local_dir, remote_dir, ExitCode::remote_file,
             remote_dir + ": more than " + std::to_string(kMaxTreeDepth) + " directory levels; not followed");
        return {};
    }
    if (::mkdir(local_dir.c_str(), 0755) < 0 && errno != EEXIST) {
        fail(local_dir, remote_dir, ExitCode::local_file, "mkdir " + local_dir + ": " + std::strerror(errno));
        return {};
    }
    struct stat st {};
    // Below the target the user named, a directory rftp makes is not reached
    // through a link: one planted there (a shared target directory) would
    // send the tree's files wherever it points, with the user's rights.
    if (local_dir != target && ::lstat(local_dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
        fail(local_dir, remote_dir, ExitCode::local_file,
             local_dir + " is a symbolic link; rftp does not write a tree's files through one (remove it, or get " +
                 remote_dir + " into the link's target by name)");
        return {};
    }
    if (::stat(local_dir.c_str(), &st) < 0 || !S_ISDIR(st.st_mode)) {
        fail(local_dir, remote_dir, ExitCode::local_file, local_dir + " exists and is not a directory");
        return {};
    }
    auto listed = list_remote_directory(session, remote_dir);
    if (!listed) {
        if (session_lost(listed.error())) return std::unexpected(listed.error());
        fail(local_dir, remote_dir, listed.error());
        return {};
    }
    for (auto &why : listed->unusable) fail(local_dir, remote_dir, ExitCode::remote_file, std::move(why));
    for (const auto &why : listed->skipped) log::warning(why);
    // Pushed by the caller when the parent's listing named it; the top
    // directory's comes from its own listing.
    const bool push_own = depth == 0 && listed->unique;
    if (push_own) above.push_back(*listed->unique);
    auto ok = add_entries(listed->entries, remote_dir, local_dir, depth);
    if (push_own) above.pop_back();
    return ok;
}

OutcomeStatus TreeWalk::add_entries(const std::vector<RemoteEntry> &listed, const std::string &remote_dir,
                                    const std::string &local_dir, int depth) {
    for (const auto &e : listed) {
        if (stopped) return {};
        if (++entries > kMaxTreeEntries) {
            stopped = true;
            fail(local_dir, remote_dir, ExitCode::remote_file,
                 "more than " + std::to_string(kMaxTreeEntries) + " files and directories listed; rftp lists no more "
                 "(fetch the tree's parts one by one)");
            return {};
        }
        std::string remote = join(remote_dir, e.name);
        std::string local = join(local_dir, e.name);
        if (!e.is_directory) {
            plan.files.push_back(FileJob{local, remote, e.size, e.modify});
            continue;
        }
        // A directory the server says is one being listed (its unique fact,
        // where it sends one) is a loop, not more data: skipped, as cp -r does.
        if (e.unique && std::ranges::find(above, *e.unique) != above.end()) {
            log::warning(remote + ": the server lists a directory rftp is already inside (a loop); not followed");
            continue;
        }
        if (e.unique) above.push_back(*e.unique);
        auto ok = add(remote, local, depth + 1);
        if (e.unique) above.pop_back();
        if (!ok) return ok;
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
                auto ahead = list_tree_ahead(session, remote);
                if (!ahead) return std::unexpected(ahead.error());
                TreeWalk walk{session, plan, local_dir};
                if (auto ok = walk.add(remote, local, 0); !ok) return std::unexpected(ok.error());
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
