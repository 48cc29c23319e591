#include "client/sync/sync_plan.h"

#include <algorithm>

namespace rftp::client {
namespace {

// Why a file present on both sides must be copied again; empty: it need not.
std::string why_changed(const std::string &path, const TreeFile &source, const TreeFile &destination, Compare compare,
                        const std::map<std::string, DigestPair> &digests) {
    if (source.size != destination.size) return "size";
    switch (compare) {
        case Compare::size: return "";
        case Compare::size_and_time:
            // A time the destination did not give cannot vouch for the file:
            // a rewritten same-size file must never pass as unchanged.
            return source.mtime && destination.mtime && *source.mtime == *destination.mtime ? "" : "mtime";
        case Compare::checksum: {
            auto d = digests.find(path);
            return d != digests.end() && d->second.source == d->second.destination ? "" : "checksum";
        }
    }
    return "size";
}

}  // namespace

const char *action_name(SyncAction action) {
    switch (action) {
        case SyncAction::copy_new: return "new";
        case SyncAction::copy_changed: return "changed";
        case SyncAction::unchanged: return "unchanged";
        case SyncAction::remove: return "delete";
    }
    return "?";
}

SyncPlan::Totals SyncPlan::count(SyncAction action) const {
    Totals t;
    for (const auto &item : items)
        if (item.action == action) ++t.files, t.bytes += item.size;
    return t;
}

std::vector<std::string> same_size_files(const Tree &source, const Tree &destination) {
    std::vector<std::string> paths;
    for (const auto &[path, file] : source.files) {
        auto other = destination.files.find(path);
        if (other != destination.files.end() && other->second.size == file.size) paths.push_back(path);
    }
    return paths;
}

SyncPlan plan_sync(const Tree &source, const Tree &destination, Compare compare, bool remove_extraneous,
                   const std::map<std::string, DigestPair> &digests) {
    SyncPlan plan;
    for (const auto &[path, file] : source.files) {
        SyncItem item{path, SyncAction::copy_new, "", file.size, file.mtime, std::nullopt};
        if (auto other = destination.files.find(path); other != destination.files.end()) {
            item.reason = why_changed(path, file, other->second, compare, digests);
            item.action = item.reason.empty() ? SyncAction::unchanged : SyncAction::copy_changed;
            item.destination = other->second;
            if (auto d = digests.find(path); d != digests.end() && d->second.source == d->second.destination)
                item.sha256 = d->second.source;
        }
        plan.items.push_back(std::move(item));
    }
    // std::set orders "a" before "a/b": parents come first.
    for (const auto &dir : source.directories)
        if (!destination.directories.contains(dir)) plan.directories_to_make.push_back(dir);
    if (remove_extraneous) {
        for (const auto &[path, file] : destination.files)
            if (!source.files.contains(path)) plan.items.push_back(SyncItem{path, SyncAction::remove, "", file.size, {}, {}, {}});
        for (const auto &dir : destination.directories)
            if (!source.directories.contains(dir)) plan.directories_to_remove.push_back(dir);
        std::ranges::reverse(plan.directories_to_remove);
        std::ranges::sort(plan.items, {}, &SyncItem::path);
    }
    return plan;
}

}  // namespace rftp::client
