#include "daemon/listing/tree_listing.h"

#include <cerrno>
#include <vector>

#include "daemon/listing/list_format.h"

namespace rftp::daemon {
namespace {

std::string child_of(const std::string &dir, const std::string &name) {
    return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string relative_child(const std::string &relative, const std::string &name) {
    return relative.empty() ? name : relative + "/" + name;
}

}  // namespace

std::string mlsd_entry_line(const UserRoot &root, const std::string &dir, const DirEntry &entry,
                            std::string_view shown_name) {
    struct stat st = entry.st;
    if (S_ISLNK(st.st_mode))
        if (auto target = root.stat(child_of(dir, entry.name))) st = *target;
    return format_mlsx_line(st, shown_name, root.writable());
}

Status list_tree(const UserRoot &root, const std::string &vpath, const TreeListingSink &sink,
                 const std::function<bool()> &stopped) {
    // Depth first with an explicit stack: a deep tree costs memory, not
    // the transfer thread's stack. Each item: the directory's virtual
    // path and its path relative to vpath ("" for vpath itself).
    std::vector<std::pair<std::string, std::string>> pending{{vpath, ""}};
    std::size_t entries = 0;
    while (!pending.empty()) {
        if (stopped()) return fail(Error{-ECANCELED, "listing stopped"});
        auto [dir, relative] = std::move(pending.back());
        pending.pop_back();
        auto st = root.stat(dir);
        if (!st) return fail(st.error().with_context(dir));
        auto listed = root.list(dir, kMaxTreeListingEntries - entries + 1);
        if (!listed) return fail(listed.error().with_context(dir));
        entries += listed->size();
        if (entries > kMaxTreeListingEntries)
            return fail(Error{-E2BIG, "more than " + std::to_string(kMaxTreeListingEntries) + " entries"});
        std::string lines = format_mlsx_line(*st, relative.empty() ? "." : relative, root.writable(), true) + "\r\n";
        // Pushed in reverse, so the directories below come off the stack in name order.
        std::vector<std::pair<std::string, std::string>> below;
        for (const DirEntry &e : *listed) {
            const std::string shown = relative_child(relative, e.name);
            lines += mlsd_entry_line(root, dir, e, shown) + "\r\n";
            if (S_ISDIR(e.st.st_mode)) below.emplace_back(child_of(dir, e.name), shown);
        }
        if (auto written = sink(lines); !written) return written;
        pending.insert(pending.end(), below.rbegin(), below.rend());
    }
    return {};
}

}  // namespace rftp::daemon
