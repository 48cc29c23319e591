// Remote directories for many-file transfers: is a path a directory (CWD),
// make one unless it exists (MKD, then CWD to tell "exists" from a refusal),
// and list one (MLSD when FEAT offers MLST, else LIST read best effort).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client/exit_codes.h"
#include "client/session.h"

namespace rftp::client {

// CWD path: 250 -> true, a refusal -> false. Every path rftp sends is
// absolute, so the changed working directory affects nothing else.
Outcome<bool> remote_is_directory(Session &session, const std::string &path);

// MKD path, succeeding also when the directory already exists.
enum class DirectoryMade { made, found_there };
Outcome<DirectoryMade> make_or_find_remote_directory(Session &session, const std::string &path);
OutcomeStatus ensure_remote_directory(Session &session, const std::string &path);

// A listing larger than this is refused rather than read into memory: about
// two million entries, more than any real directory, and a bound on what a
// hostile server can make rftp hold.
inline constexpr std::size_t kMaxListingBytes = std::size_t{256} << 20;

struct RawListing {
    bool machine = false;  // MLSD lines; else LIST lines in the server's format
    std::string text;

    // Its lines, each without its CR, the empty ones left out.
    std::vector<std::string> lines() const;
};

// MLSD path when FEAT offered MLST, else LIST path, read whole over one plain
// data connection. what names the operation in messages ("ls /a"). A
// directory whose lines a tree listing brought is answered from those.
Outcome<RawListing> fetch_listing(Session &session, const std::string &path, const std::string &what);

// One spelling per directory, the key of session.tree_listings: "/a/b" for
// "/a/b/", "/a//b" and "/a/./b".
std::string listing_key(const std::string &path);

// MLSR's text (RawListing of it) as MLSD text per directory, keyed by
// listing_key of top and the directory's path below it; none when the
// lines break MLSR's order (docs/protocol.md, "Tree listings").
std::optional<std::map<std::string, std::string>> split_tree_listing(const std::string &top, const RawListing &tree);

// The directories' lines one MLSR brought, kept in session.tree_listings
// for fetch_listing while a walk runs; what the walk left (excluded, or cut
// short) goes with it.
class TreeListingsAhead {
public:
    explicit TreeListingsAhead(Session &session) : session_(&session) {}
    ~TreeListingsAhead() {
        if (session_) session_->tree_listings.clear();
    }
    TreeListingsAhead(TreeListingsAhead &&other) noexcept : session_(std::exchange(other.session_, nullptr)) {}
    TreeListingsAhead(const TreeListingsAhead &) = delete;
    TreeListingsAhead &operator=(const TreeListingsAhead &) = delete;
    TreeListingsAhead &operator=(TreeListingsAhead &&) = delete;

private:
    Session *session_;
};

// Before walking the tree below top: where FEAT says MLSR, one MLSR brings
// every directory's lines at once (docs/protocol.md, "Tree listings"). A
// refusal, or a listing that ended short, leaves the walk to list directory
// by directory; only a lost session is an error.
Outcome<TreeListingsAhead> list_tree_ahead(Session &session, const std::string &top);

struct RemoteEntry {
    std::string name;  // one path component, never "", ".", ".." or containing '/'
    bool is_directory = false;
    std::optional<uint64_t> size;  // files: from MLSD's size fact or LIST's size column
    std::optional<std::string> unique;  // MLSD's unique fact: the same value is the same directory
    std::optional<std::string> modify;  // MLSD's modify fact
};

struct RemoteDirectory {
    std::vector<RemoteEntry> entries;
    std::optional<std::string> unique;  // the listed directory's own unique fact (MLSD's cdir line)
    // Entries rftp cannot fetch: an MLSD line it cannot read, a name unsafe
    // as a local path. Each is a failed file, never silently left out.
    std::vector<std::string> unusable;
    // Entries left out by design (symbolic links, devices), each said as a
    // warning: a tree copied without them is no silent gap either.
    std::vector<std::string> skipped;
};

// Files and subdirectories of path. Other types (symlinks, devices) are left
// out: rftp copies files and the directories holding them.
Outcome<RemoteDirectory> list_remote_directory(Session &session, const std::string &path);

// One line of Unix-style LIST output ("drwxr-xr-x 2 u g 4096 Jan 01 12:00 name");
// false for anything else (totals, symlinks, unknown formats).
bool parse_unix_list_line(const std::string &line, RemoteEntry &entry);

// A name a server sent that is safe to use as one local path component.
bool is_safe_entry_name(const std::string &name);

}  // namespace rftp::client
