// --include / --exclude for rftp sync and check, with rsync's pattern rules
// (docs/cli.md "Filters"):
// - Rules are tried in the order given; the first that matches decides.
//   A path no rule matches is included.
// - `*` matches any run of characters but '/'; `**` matches anything,
//   '/' included; `?` matches one character but '/'.
// - A pattern starting with '/' is anchored at the top of the tree.
// - A pattern with a '/' elsewhere, or with `**`, is matched against the
//   whole relative path (unanchored: against any trailing part that starts
//   at a component); one without is matched against the last component.
// - A pattern ending in '/' matches directories only.
// - An excluded directory is not entered: nothing beneath it is copied,
//   compared or deleted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "client/cli/options.h"

namespace rftp::client {

// Whether text matches glob, with the '*', '**' and '?' above.
bool glob_matches(std::string_view glob, std::string_view text);

class PathFilter {
public:
    PathFilter() = default;
    explicit PathFilter(std::vector<FilterRule> rules) : rules_(std::move(rules)) {}

    // path is relative to the tree's top, '/'-separated, without a leading '/'.
    bool includes(std::string_view path, bool is_directory) const;
    bool empty() const { return rules_.empty(); }

private:
    std::vector<FilterRule> rules_;
};

}  // namespace rftp::client
