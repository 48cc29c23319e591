#include "daemon/listing/tree_listing.h"

#include <cerrno>
#include <cstdint>
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

// A line break in a name would end its line early, and what follows could
// pass for an entry of another directory: MLSR refuses, and a client lists
// that tree directory by directory.
bool breaks_a_line(const std::string &name) { return name.find_first_of("\r\n") != std::string::npos; }

// What one walk has said so far, and what it may still say.
class Output {
public:
    Output(const TreeListingSink &sink, const TreeListingBounds &bounds) : sink_(sink), bounds_(bounds) {}
    Status add(const std::string &line) {
        if (sent_ + pending_.size() + line.size() + 2 > bounds_.max_bytes)
            return fail(Error{-E2BIG, "more than " + std::to_string(bounds_.max_bytes) + " bytes of listing"});
        pending_ += line;
        pending_ += "\r\n";
        return pending_.size() >= bounds_.piece_bytes ? flush() : Status{};
    }
    Status flush() {
        if (pending_.empty()) return {};
        sent_ += pending_.size();
        Status written = sink_(pending_);
        pending_.clear();
        return written;
    }

private:
    const TreeListingSink &sink_;
    const TreeListingBounds &bounds_;
    std::string pending_;
    std::size_t sent_ = 0;
};

struct PendingDir {
    std::string path;      // virtual path
    std::string relative;  // below the listed directory; "" for itself
};

}  // namespace

struct stat listed_stat(const UserRoot &root, const std::string &dir, const DirEntry &entry) {
    if (S_ISLNK(entry.st.st_mode))
        if (auto target = root.stat(child_of(dir, entry.name))) return *target;
    return entry.st;
}

std::string mlsd_entry_line(const UserRoot &root, const std::string &dir, const DirEntry &entry,
                            std::string_view shown_name) {
    return format_mlsx_line(listed_stat(root, dir, entry), shown_name, root.writable());
}

Status list_tree(const UserRoot &root, const std::string &vpath, const TreeListingSink &sink,
                 const std::function<bool()> &stopped, const TreeListingBounds &bounds) {
    // Depth first with an explicit stack: a deep tree costs memory, not
    // the transfer thread's stack.
    std::vector<PendingDir> pending{{vpath, ""}};
    std::size_t pending_bytes = vpath.size();
    std::size_t entries = 0;
    Output out(sink, bounds);
    while (!pending.empty()) {
        if (stopped()) return fail(Error{-ECANCELED, "listing stopped"});
        PendingDir dir = std::move(pending.back());
        pending.pop_back();
        pending_bytes -= dir.path.size() + dir.relative.size();
        auto st = root.stat(dir.path);
        if (!st) return fail(st.error().with_context(dir.path));
        const Error too_many{-E2BIG, "more than " + std::to_string(bounds.max_entries) + " entries"};
        // A directory larger than what the bound leaves stops its own read.
        const std::size_t left = bounds.max_entries - entries;
        auto listed = root.list(dir.path, left == SIZE_MAX ? left : left + 1);
        if (!listed && listed.error().code == -E2BIG) return fail(too_many);
        if (!listed) return fail(listed.error().with_context(dir.path));
        entries += listed->size();
        if (entries > bounds.max_entries) return fail(too_many);
        const std::string own = dir.relative.empty() ? "." : dir.relative;
        if (auto ok = out.add(format_mlsx_line(*st, own, root.writable(), true)); !ok) return ok;
        // Pushed in reverse, so the directories below come off the stack in name order.
        std::vector<PendingDir> below;
        for (const DirEntry &e : *listed) {
            if (breaks_a_line(e.name)) return fail(Error{-EINVAL, dir.path + ": a name in it holds a line break"});
            const std::string shown = relative_child(dir.relative, e.name);
            if (auto ok = out.add(mlsd_entry_line(root, dir.path, e, shown)); !ok) return ok;
            if (!S_ISDIR(e.st.st_mode)) continue;
            below.push_back({child_of(dir.path, e.name), shown});
            pending_bytes += below.back().path.size() + shown.size();
            if (pending_bytes > bounds.max_pending_path_bytes)
                return fail(Error{-E2BIG, "too many directories waiting to be listed"});
        }
        pending.insert(pending.end(), std::make_move_iterator(below.rbegin()), std::make_move_iterator(below.rend()));
    }
    return out.flush();
}

}  // namespace rftp::daemon
