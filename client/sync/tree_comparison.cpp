#include "client/sync/tree_comparison.h"

#include <thread>

#include "client/sync/backup.h"
#include "client/sync/digests.h"
#include "client/sync/file_times.h"
#include "client/sync/files_from.h"
#include "client/sync/local_tree.h"
#include "client/sync/remote_tree_walk.h"

namespace rftp::client {
namespace {

// A LIST gives no time to compare: MDTM for each file whose size alone
// would call it unchanged (one round trip each, said once).
OutcomeStatus fill_remote_times(Session &session, Comparison &c, bool remote_is_source) {
    Tree &remote = remote_is_source ? c.source : c.destination;
    const std::string &top = remote_is_source ? c.source_top : c.destination_top;
    bool asked = false;
    for (const auto &path : same_size_files(c.source, c.destination)) {
        TreeFile &file = remote.files[path];
        if (file.mtime) continue;
        auto t = remote_mtime(session, path_under(top, path));
        if (!t) return std::unexpected(t.error());
        file.mtime = *t;
        asked = true;
    }
    if (asked)
        c.notes.push_back("the server's listings give no modification times (no MLSD): asked MDTM once per file");
    return {};
}

Outcome<std::map<std::string, DigestPair>> both_digests(Session &session, const Options &o, const Comparison &c) {
    if (!session.features.hash_sha256)
        return fail_as(ExitCode::remote_file, "--compare checksum needs the server's HASH SHA-256, which this server "
                                              "does not offer (not in its FEAT reply); compare with --compare mtime "
                                              "or --compare size");
    const auto paths = same_size_files(c.source, c.destination);
    const std::string &local_top = o.sync.upload ? c.source_top : c.destination_top;
    const std::string &remote = o.sync.upload ? c.destination_top : c.source_top;
    auto local = local_digests(local_top, paths, std::max(2u, std::thread::hardware_concurrency()));
    if (!local) return std::unexpected(local.error());
    auto theirs = remote_digests(session, remote, paths);
    if (!theirs) return std::unexpected(theirs.error());
    std::map<std::string, DigestPair> pairs;
    for (const auto &path : paths) {
        const std::string &mine = (*local)[path], &other = (*theirs)[path];
        pairs[path] = o.sync.upload ? DigestPair{mine, other} : DigestPair{other, mine};
    }
    return pairs;
}

}  // namespace

PathFilter sync_filter(const Options &o, const std::string &destination_top) {
    auto rules = o.sync.filters;
    if (!o.sync.backup_dir.empty())
        if (auto inside = backup_inside_tree(o.sync.backup_dir, destination_top))
            rules.insert(rules.begin(), FilterRule{false, "/" + *inside + "/"});
    return PathFilter(std::move(rules));
}

std::string remote_top(const std::string &url_path) {
    std::string top = url_path.empty() ? "/" : url_path;
    while (top.size() > 1 && top.ends_with('/')) top.pop_back();
    return top;
}

Outcome<Comparison> compare_trees(Session &session, const Options &o, const std::string &remote_path,
                                  bool remove_extraneous) {
    Comparison c;
    const std::string remote = remote_top(remote_path);
    c.source_top = o.sync.upload ? o.local : remote;
    c.destination_top = o.sync.upload ? remote : o.local;
    const PathFilter filter = sync_filter(o, c.destination_top);
    auto local_tree = list_local_tree(o.local, filter);
    if (!local_tree) return std::unexpected(local_tree.error());
    auto remote_tree = list_remote_tree(session, remote, filter);
    if (!remote_tree) return std::unexpected(remote_tree.error());
    c.source = std::move(o.sync.upload ? *local_tree : *remote_tree);
    c.destination = std::move(o.sync.upload ? *remote_tree : *local_tree);
    if (!c.source.exists)
        return fail_as(o.sync.upload ? ExitCode::usage : ExitCode::remote_file,
                       c.source_top + " is not a directory" + (o.sync.upload ? "" : " on the server") +
                           "; the source of a sync must be an existing directory");
    c.only = o.sync.only;
    if (!o.sync.files_from.empty()) {
        auto listed = read_files_from(o.sync.files_from, o.sync.from0);
        if (!listed) return std::unexpected(listed.error());
        c.only = std::move(*listed);
    }
    if (c.only) {
        keep_only(c.source, *c.only);
        keep_only(c.destination, *c.only);
    }
    std::map<std::string, DigestPair> digests;
    if (o.sync.compare == Compare::size_and_time)
        if (auto filled = fill_remote_times(session, c, !o.sync.upload); !filled) return std::unexpected(filled.error());
    if (o.sync.compare == Compare::checksum) {
        auto d = both_digests(session, o, c);
        if (!d) return std::unexpected(d.error());
        digests = std::move(*d);
    }
    c.plan = plan_sync(c.source, c.destination, o.sync.compare, remove_extraneous, digests);
    return c;
}

}  // namespace rftp::client
