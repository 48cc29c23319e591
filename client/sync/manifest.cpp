#include "client/sync/manifest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "client/sync/whole_file.h"
#include "common/decimal.h"
#include "protocol/time_val.h"

namespace rftp::client {
namespace {

constexpr const char *kHeader = "# rftp manifest 1";

std::string escaped(const std::string &path) {
    std::string out;
    for (char c : path) {
        switch (c) {
            case '\\': out += "\\\\"; break;
            case '\t': out += "\\t"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += c;
        }
    }
    return out;
}

std::optional<std::string> unescaped(const std::string &text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\') {
            out += text[i];
            continue;
        }
        if (++i == text.size()) return std::nullopt;
        switch (text[i]) {
            case '\\': out += '\\'; break;
            case 't': out += '\t'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            default: return std::nullopt;
        }
    }
    return out;
}

std::string tsv_line(const ManifestEntry &e) {
    return escaped(e.path) + "\t" + std::to_string(e.size) + "\t" + (e.mtime ? ftp::format_time_val(*e.mtime) : "-") +
           "\t" + e.sha256.value_or("-") + "\n";
}

std::string json_line(const ManifestEntry &e) {
    nlohmann::json j{{"path", e.path}, {"size", e.size}};
    j["modify"] = e.mtime ? nlohmann::json(ftp::format_time_val(*e.mtime)) : nlohmann::json(nullptr);
    j["sha256"] = e.sha256 ? nlohmann::json(*e.sha256) : nlohmann::json(nullptr);
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool is_sha256_hex(const std::string &s) {
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::optional<ManifestEntry> parse_tsv(const std::string &line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string f; std::getline(in, f, '\t');) fields.push_back(f);
    if (fields.size() != 4) return std::nullopt;
    auto path = unescaped(fields[0]);
    auto size = parse_decimal(fields[1], UINT64_MAX);
    if (!path || path->empty() || !size) return std::nullopt;
    ManifestEntry e{*path, *size, std::nullopt, std::nullopt};
    if (fields[2] != "-") {
        auto t = ftp::parse_time_val(fields[2]);
        if (!t) return std::nullopt;
        e.mtime = t->seconds;
    }
    if (fields[3] != "-") {
        if (!is_sha256_hex(fields[3])) return std::nullopt;
        e.sha256 = fields[3];
    }
    return e;
}

std::optional<ManifestEntry> parse_json(const std::string &line) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || !j.contains("path") || !j["path"].is_string() || !j.contains("size") ||
        !j["size"].is_number_unsigned())
        return std::nullopt;
    ManifestEntry e{j["path"].get<std::string>(), j["size"].get<uint64_t>(), std::nullopt, std::nullopt};
    if (e.path.empty()) return std::nullopt;
    if (j.contains("modify") && !j["modify"].is_null()) {
        auto t = j["modify"].is_string() ? ftp::parse_time_val(j["modify"].get<std::string>()) : std::nullopt;
        if (!t) return std::nullopt;
        e.mtime = t->seconds;
    }
    if (j.contains("sha256") && !j["sha256"].is_null()) {
        if (!j["sha256"].is_string() || !is_sha256_hex(j["sha256"].get<std::string>())) return std::nullopt;
        e.sha256 = j["sha256"].get<std::string>();
    }
    return e;
}

}  // namespace

OutcomeStatus write_manifest(const std::string &file, std::vector<ManifestEntry> entries, bool json_lines) {
    std::ranges::sort(entries, {}, &ManifestEntry::path);
    std::string text = json_lines ? "" : std::string(kHeader) + "\n";
    for (const auto &e : entries) text += json_lines ? json_line(e) : tsv_line(e);
    return write_whole_file(file, text, "the manifest");
}

Outcome<std::vector<ManifestEntry>> read_manifest(const std::string &file) {
    std::ifstream in(file);
    if (!in) return fail_as(ExitCode::usage, "cannot read the manifest " + file + ": " + std::strerror(errno));
    std::vector<ManifestEntry> entries;
    std::size_t number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.empty() || line.starts_with('#')) continue;
        auto e = line.starts_with('{') ? parse_json(line) : parse_tsv(line);
        if (!e) return fail_as(ExitCode::usage, file + ":" + std::to_string(number) + ": not a manifest line");
        entries.push_back(std::move(*e));
    }
    return entries;
}

}  // namespace rftp::client
