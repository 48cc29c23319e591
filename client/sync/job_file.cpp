#include "client/sync/job_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/yaml/config_error.h"
#include "common/yaml/yaml_document.h"
#include "common/yaml/yaml_values.h"

namespace rftp::client {
namespace {

using yaml::KeyLocation;

enum class Kind { flag, text, number, choice, filters };

// One key of a replication (or of defaults) and the option it becomes.
struct JobKey {
    const char *key;
    Kind kind;
    const char *option;
    uint64_t min = 0, max = 0;                // number
    std::vector<std::string> choices = {};    // choice
};

const std::vector<JobKey> &job_keys() {
    static const std::vector<JobKey> keys = {
        {"compare", Kind::choice, "--compare", 0, 0, {"size", "mtime", "checksum"}},
        {"delete", Kind::flag, "--delete"},
        {"max_delete", Kind::text, "--max-delete"},
        {"dry_run", Kind::flag, "--dry-run"},
        {"filters", Kind::filters, ""},
        {"files_from", Kind::text, "--files-from"},
        {"from0", Kind::flag, "--from0"},
        {"manifest", Kind::text, "--manifest"},
        {"unfinished", Kind::text, "--unfinished"},
        {"backup_dir", Kind::text, "--backup-dir"},
        {"retries", Kind::number, "--retries", 0, 100},
        {"concurrency", Kind::number, "--concurrency", 1, 64},
        {"streams", Kind::number, "--parallel", 1, 256},
        {"transport", Kind::choice, "--transport", 0, 0, {"auto", "rdma", "tcp"}},
        {"verify", Kind::flag, "--verify"},
        {"continue_on_error", Kind::flag, "--continue-on-error"},
        {"timeout", Kind::number, "--timeout", 1, 86400},
        {"tls", Kind::choice, "--tls", 0, 0, {"auto", "require", "off"}},
        {"cacert", Kind::text, "--cacert"},
        {"pinned_pubkey", Kind::text, "--pinned-pubkey"},
    };
    return keys;
}

const JobKey *find_key(const std::string &name) {
    for (const auto &k : job_keys())
        if (name == k.key) return &k;
    return nullptr;
}

std::unexpected<Failure> job_error(const KeyLocation &at, const std::string &what) {
    return fail_as(ExitCode::usage, yaml::config_error(at, what).message);
}
std::unexpected<Failure> job_error(const Error &e) { return fail_as(ExitCode::usage, e.message); }

// --include/--exclude from [{include: PATTERN}, {exclude: PATTERN}, ...], in order.
OutcomeStatus add_filters(const YAML::Node &node, const KeyLocation &at, std::vector<std::string> &args) {
    if (!node.IsSequence()) return job_error(at, "expected a list of {include: PATTERN} or {exclude: PATTERN}");
    for (std::size_t i = 0; i < node.size(); ++i) {
        const KeyLocation here = at.element(i, node[i].Mark());
        if (!node[i].IsMap() || node[i].size() != 1)
            return job_error(here, "expected one {include: PATTERN} or {exclude: PATTERN}");
        const auto entry = *node[i].begin();
        const std::string which = entry.first.Scalar();
        if (which != "include" && which != "exclude")
            return job_error(here.child(which, entry.first.Mark()), "unknown key; expected include or exclude");
        auto pattern = yaml::read_string(entry.second, here.child(which, entry.second.Mark()));
        if (!pattern) return job_error(pattern.error());
        if (pattern->empty()) return job_error(here.child(which, entry.second.Mark()), "an empty pattern");
        args.insert(args.end(), {"--" + which, *pattern});
    }
    return {};
}

bool is_max_delete(const std::string &v) {
    const bool percent = v.ends_with('%');
    std::string digits = percent ? v.substr(0, v.size() - 1) : v;
    if (digits.empty() || digits.size() >= 19 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    return !percent || std::stoull(digits) <= 100;
}

// The option one key becomes, appended to args.
OutcomeStatus add_option(const JobKey &k, const YAML::Node &node, const KeyLocation &at, std::vector<std::string> &args) {
    switch (k.kind) {
        case Kind::flag: {
            auto on = yaml::read_bool(node, at);
            if (!on) return job_error(on.error());
            if (*on) args.emplace_back(k.option);
            return {};
        }
        case Kind::number: {
            auto n = yaml::read_uint(node, at, k.min, k.max);
            if (!n) return job_error(n.error());
            args.insert(args.end(), {k.option, std::to_string(*n)});
            return {};
        }
        case Kind::filters: return add_filters(node, at, args);
        case Kind::text:
        case Kind::choice: break;
    }
    auto text = yaml::read_string(node, at);
    if (!text) return job_error(text.error());
    if (k.kind == Kind::choice && std::ranges::find(k.choices, *text) == k.choices.end()) {
        std::string all;
        for (const auto &c : k.choices) all += (all.empty() ? "" : ", ") + c;
        return job_error(at, "expected one of " + all + ", got '" + *text + "'");
    }
    if (text->empty()) return job_error(at, "an empty value");
    if (std::string(k.key) == "max_delete" && !is_max_delete(*text))
        return job_error(at, "expected a number of files or a percentage such as 5%, got '" + *text + "'");
    if (std::string(k.key) == "files_from" && *text == "-")
        return job_error(at, "a job reads no list from stdin; name a file");
    if (std::string(k.key) == "pinned_pubkey" && !text->starts_with("sha256//"))
        return job_error(at, "expected sha256//<base64 of the key's SHA-256>, as curl takes it");
    args.insert(args.end(), {k.option, *text});
    return {};
}

using Settings = std::map<std::string, std::pair<YAML::Node, KeyLocation>>;

// The options of a map (defaults, or one replication), checked; skip: keys
// handled by the caller (name, source, destination).
Outcome<Settings> read_settings(const YAML::Node &map, const KeyLocation &at, const std::set<std::string> &skip) {
    if (!map.IsMap()) return job_error(at, "expected a map of options");
    Settings out;
    for (const auto &entry : map) {
        const std::string key = entry.first.Scalar();
        const KeyLocation here = at.child(key, entry.first.Mark());
        if (skip.contains(key)) continue;
        const JobKey *known = find_key(key);
        if (!known) return job_error(here, "unknown key");
        const KeyLocation value_at = at.child(key, entry.second.Mark());
        std::vector<std::string> unused;  // checked here, so a default no replication keeps is checked too
        if (auto ok = add_option(*known, entry.second, value_at, unused); !ok) return std::unexpected(ok.error());
        out[key] = {entry.second, value_at};
    }
    return out;
}

Outcome<std::string> required_text(const YAML::Node &map, const KeyLocation &at, const char *key) {
    if (!map[key]) return job_error(at, std::string("missing ") + key);
    auto text = yaml::read_string(map[key], at.child(key, map[key].Mark()));
    if (!text) return job_error(text.error());
    if (text->empty()) return job_error(at.child(key, map[key].Mark()), "an empty value");
    return *text;
}

bool is_job_name(const std::string &name) {
    return !name.empty() && name.size() <= 64 &&
           name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == std::string::npos;
}

Outcome<SyncJob> read_replication(const YAML::Node &node, const KeyLocation &at, const Settings &defaults) {
    if (!node.IsMap()) return job_error(at, "expected a map with name, source and destination");
    auto name = required_text(node, at, "name");
    if (!name) return std::unexpected(name.error());
    if (!is_job_name(*name)) return job_error(at.child("name", node["name"].Mark()), "use letters, digits, '.', '_' and '-' (at most 64)");
    auto source = required_text(node, at, "source");
    auto destination = source ? required_text(node, at, "destination") : source;
    if (!destination) return std::unexpected(destination.error());
    if ((source->find("://") != std::string::npos) == (destination->find("://") != std::string::npos))
        return job_error(at, "source and destination must be a local directory and a URL, one each");
    auto own = read_settings(node, at, {"name", "source", "destination"});
    if (!own) return std::unexpected(own.error());
    Settings merged = defaults;
    for (auto &[k, v] : *own) merged[k] = v;
    auto flag_on = [&merged](const char *key) {
        auto it = merged.find(key);
        if (it == merged.end()) return false;
        auto on = yaml::read_bool(it->second.first, it->second.second);
        return on && *on;
    };
    const bool deletes = flag_on("delete");
    // A default limit is for the replications that delete; one a
    // replication sets without deleting is a mistake.
    if (!deletes && own->contains("max_delete"))
        return job_error((*own)["max_delete"].second, "max_delete limits delete, which this replication does not set");
    if (!deletes) merged.erase("max_delete");
    // The combinations rftp sync refuses, refused here with their place.
    if (deletes && merged.contains("files_from"))
        return job_error(merged["files_from"].second, "delete with files_from would judge the whole destination by a "
                                                      "partial list; run them apart");
    if (flag_on("from0") && !merged.contains("files_from") && !merged.contains("unfinished"))
        return job_error(merged["from0"].second, "from0 says how files_from and unfinished lists are separated; "
                                                 "give one of them");
    SyncJob job{*name, {"sync"}};
    for (const auto &k : job_keys()) {  // in table order, so a job's command line reads the same each time
        auto it = merged.find(k.key);
        if (it == merged.end()) continue;
        if (auto added = add_option(k, it->second.first, it->second.second, job.args); !added)
            return std::unexpected(added.error());
    }
    job.args.insert(job.args.end(), {"--", *source, *destination});
    return job;
}

}  // namespace

Outcome<std::vector<SyncJob>> read_job_file(const std::string &path) {
    std::ifstream in(path);
    if (!in) return fail_as(ExitCode::usage, "cannot read the job file " + path + ": " + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    const KeyLocation top{path, "", YAML::Mark::null_mark()};
    YAML::Node doc;
    try {
        auto loaded = yaml::load_one_document(text.str(), path);
        if (!loaded) return job_error(loaded.error());
        doc = *loaded;
    } catch (const YAML::Exception &e) {
        return fail_as(ExitCode::usage, path + ":" + std::to_string(e.mark.line + 1) + ":" +
                                            std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (!doc.IsMap()) return job_error(top, "expected a map with replications (and defaults)");
    for (const auto &entry : doc)
        if (entry.first.Scalar() != "defaults" && entry.first.Scalar() != "replications")
            return job_error(top.child(entry.first.Scalar(), entry.first.Mark()), "unknown key; expected defaults or replications");
    Settings defaults;
    if (doc["defaults"]) {
        auto d = read_settings(doc["defaults"], top.child("defaults", doc["defaults"].Mark()), {});
        if (!d) return std::unexpected(d.error());
        defaults = std::move(*d);
    }
    const YAML::Node list = doc["replications"];
    if (!list || !list.IsSequence() || list.size() == 0)
        return job_error(top.child("replications", list ? list.Mark() : YAML::Mark::null_mark()),
                         "expected a non-empty list of replications");
    std::vector<SyncJob> jobs;
    std::set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const KeyLocation at = top.child("replications", list.Mark()).element(i, list[i].Mark());
        auto job = read_replication(list[i], at, defaults);
        if (!job) return std::unexpected(job.error());
        if (!names.insert(job->name).second) return job_error(at.child("name", list[i]["name"].Mark()), "a name used twice");
        jobs.push_back(std::move(*job));
    }
    return jobs;
}

}  // namespace rftp::client
