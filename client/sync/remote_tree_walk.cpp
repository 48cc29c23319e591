#include "client/sync/remote_tree_walk.h"

#include <deque>
#include <utility>

#include "client/batch/remote_tree.h"
#include "client/batch/tree_bounds.h"
#include "protocol/partial_names.h"
#include "protocol/time_val.h"

namespace rftp::client {
namespace {

std::optional<int64_t> listed_seconds(const std::optional<std::string> &modify) {
    if (!modify) return std::nullopt;
    auto t = ftp::parse_time_val(*modify);
    if (!t) return std::nullopt;
    return t->seconds;
}

std::size_t depth_of(const std::string &relative) {
    return relative.empty() ? 0 : 1 + static_cast<std::size_t>(std::ranges::count(relative, '/'));
}

}  // namespace

Outcome<Tree> list_remote_tree(Session &session, const std::string &top, const PathFilter &filter) {
    Tree tree;
    auto is_dir = remote_is_directory(session, top);
    if (!is_dir) return std::unexpected(is_dir.error());
    if (!*is_dir) {
        tree.exists = false;
        return tree;
    }
    auto ahead = list_tree_ahead(session, top);
    if (!ahead) return std::unexpected(ahead.error());
    std::deque<std::string> pending{""};
    std::size_t entries = 0;
    while (!pending.empty()) {
        std::string relative = std::move(pending.front());
        pending.pop_front();
        const std::string where = path_under(top, relative);
        auto listed = list_remote_directory(session, where);
        if (!listed) {
            if (session_lost(listed.error())) return std::unexpected(listed.error());
            tree.problems.push_back(listed.error());
            continue;
        }
        for (auto &text : listed->unusable) tree.problems.push_back(Failure{ExitCode::remote_file, text});
        for (auto &text : listed->skipped) tree.skipped.push_back(text);
        for (const auto &entry : listed->entries) {
            if (++entries > kMaxTreeEntries) {
                tree.problems.push_back(Failure{ExitCode::remote_file, "more than 10,000,000 entries under " + top});
                return tree;
            }
            std::string path = relative.empty() ? entry.name : relative + "/" + entry.name;
            if (entry.is_directory) {
                if (!filter.includes(path, true)) continue;
                if (depth_of(path) > static_cast<std::size_t>(kMaxTreeDepth)) {
                    tree.problems.push_back(Failure{ExitCode::remote_file, path_under(top, path) + ": more than " +
                                                                        std::to_string(kMaxTreeDepth) + " levels deep"});
                    continue;
                }
                tree.directories.insert(path);
                pending.push_back(std::move(path));
            } else {
                if (ftp::is_transfer_bookkeeping(entry.name) || !filter.includes(path, false)) continue;
                if (!entry.size) {
                    tree.problems.push_back(Failure{ExitCode::remote_file, "the listing gives no size for " + path_under(top, path)});
                    continue;
                }
                tree.files[path] = TreeFile{*entry.size, listed_seconds(entry.modify)};
            }
        }
    }
    return tree;
}

}  // namespace rftp::client
