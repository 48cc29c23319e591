#include "client/sync/path_filter.h"

namespace rftp::client {
namespace {

bool rule_matches(std::string_view pattern, std::string_view path) {
    const bool anchored = pattern.starts_with('/');
    if (anchored) pattern.remove_prefix(1);
    const bool whole_path = anchored || pattern.find('/') != std::string_view::npos ||
                            pattern.find("**") != std::string_view::npos;
    if (!whole_path) {
        auto slash = path.rfind('/');
        return glob_matches(pattern, slash == std::string_view::npos ? path : path.substr(slash + 1));
    }
    if (anchored) return glob_matches(pattern, path);
    // Unanchored: the whole path, or any part of it after a '/'.
    for (std::size_t from = 0;;) {
        if (glob_matches(pattern, path.substr(from))) return true;
        auto slash = path.find('/', from);
        if (slash == std::string_view::npos) return false;
        from = slash + 1;
    }
}

}  // namespace

bool glob_matches(std::string_view glob, std::string_view text) {
    if (glob.empty()) return text.empty();
    if (glob.starts_with("**")) {
        std::string_view rest = glob.substr(2);
        for (std::size_t i = 0; i <= text.size(); ++i)
            if (glob_matches(rest, text.substr(i))) return true;
        return false;
    }
    if (glob[0] == '*') {
        std::string_view rest = glob.substr(1);
        for (std::size_t i = 0; i <= text.size(); ++i) {
            if (glob_matches(rest, text.substr(i))) return true;
            if (i < text.size() && text[i] == '/') return false;
        }
        return false;
    }
    if (text.empty()) return false;
    if (glob[0] == '?') return text[0] != '/' && glob_matches(glob.substr(1), text.substr(1));
    return glob[0] == text[0] && glob_matches(glob.substr(1), text.substr(1));
}

bool PathFilter::includes(std::string_view path, bool is_directory) const {
    for (const auto &rule : rules_) {
        std::string_view pattern = rule.pattern;
        if (pattern.ends_with('/')) {
            if (!is_directory) continue;
            pattern.remove_suffix(1);
        }
        if (rule_matches(pattern, path)) return rule.include;
    }
    return true;
}

}  // namespace rftp::client
