#include "client/sync/files_from.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "client/sync/whole_file.h"

namespace rftp::client {
namespace {

// "./a//b/" -> "a/b"; nullopt for "..", and for nothing left at all.
std::optional<std::string> normalized(const std::string &line) {
    std::string out;
    std::istringstream parts(line);
    for (std::string part; std::getline(parts, part, '/');) {
        if (part.empty() || part == ".") continue;
        if (part == "..") return std::nullopt;
        out += (out.empty() ? "" : "/") + part;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

bool listed_or_beneath(const std::string &path, const std::set<std::string> &listed) {
    for (std::string p = path;;) {
        if (listed.contains(p)) return true;
        auto slash = p.rfind('/');
        if (slash == std::string::npos) return false;
        p.resize(slash);
    }
}

}  // namespace

Outcome<std::set<std::string>> read_files_from(const std::string &file, bool from0) {
    std::ifstream opened;
    if (file != "-") {
        opened.open(file, std::ios::binary);
        if (!opened) return fail_as(ExitCode::usage, "--files-from " + file + ": " + std::strerror(errno));
    }
    std::istream &in = file == "-" ? std::cin : opened;
    std::set<std::string> listed;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line, from0 ? '\0' : '\n');) {
        ++number;
        if (!from0 && line.ends_with('\r')) line.pop_back();
        if (line.empty() || (!from0 && line.starts_with('#'))) continue;
        auto path = normalized(line);
        if (!path)
            return fail_as(ExitCode::usage, "--files-from " + file + ":" + std::to_string(number) +
                                                ": not a path beneath the source: '" + line + "'");
        listed.insert(*path);
    }
    return listed;
}

OutcomeStatus write_files_list(const std::string &file, const std::vector<std::string> &paths, bool from0) {
    std::string text;
    for (const auto &p : paths) text += p + (from0 ? '\0' : '\n');
    return write_whole_file(file, text, "the list of unfinished files");
}

void keep_only(Tree &tree, const std::set<std::string> &listed) {
    std::erase_if(tree.files, [&](const auto &entry) { return !listed_or_beneath(entry.first, listed); });
    // A directory stays when it is listed, beneath one listed, or on the way to one.
    std::erase_if(tree.directories, [&](const std::string &dir) {
        if (listed_or_beneath(dir, listed)) return false;
        auto above = listed.lower_bound(dir + "/");
        return above == listed.end() || !above->starts_with(dir + "/");
    });
}

}  // namespace rftp::client
