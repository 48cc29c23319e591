#include "client/sync/plan_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "client/sync/whole_file.h"

namespace rftp::client {
namespace {

constexpr int kVersion = 1;

const char *compare_name(Compare c) {
    return c == Compare::size ? "size" : c == Compare::checksum ? "checksum" : "mtime";
}

nlohmann::json facts_json(const std::optional<TreeFile> &f) {
    if (!f) return nullptr;
    return {{"size", f->size}, {"mtime", f->mtime ? nlohmann::json(*f->mtime) : nlohmann::json(nullptr)}};
}

std::optional<TreeFile> facts_of(const nlohmann::json &j) {
    if (j.is_null()) return std::nullopt;
    TreeFile f{j.at("size").get<uint64_t>(), std::nullopt};
    if (!j.at("mtime").is_null()) f.mtime = j.at("mtime").get<int64_t>();
    return f;
}

nlohmann::json item_json(const SyncItem &item) {
    return {{"path", item.path},
            {"action", action_name(item.action)},
            {"reason", item.reason},
            {"size", item.size},
            {"mtime", item.source_mtime ? nlohmann::json(*item.source_mtime) : nlohmann::json(nullptr)},
            {"destination", facts_json(item.destination)}};
}

SyncItem item_of(const nlohmann::json &j) {
    SyncItem item;
    item.path = j.at("path").get<std::string>();
    const std::string action = j.at("action").get<std::string>();
    if (action != "new" && action != "changed") throw std::invalid_argument("an item is neither new nor changed");
    if (item.path.empty() || item.path.starts_with('/') || item.path.find("..") != std::string::npos)
        throw std::invalid_argument("an item's path is not beneath the tops: " + item.path);
    item.action = action == "new" ? SyncAction::copy_new : SyncAction::copy_changed;
    item.reason = j.at("reason").get<std::string>();
    item.size = j.at("size").get<uint64_t>();
    if (!j.at("mtime").is_null()) item.source_mtime = j.at("mtime").get<int64_t>();
    item.destination = facts_of(j.at("destination"));
    return item;
}

}  // namespace

OutcomeStatus write_plan(const std::string &file, const PlanFile &plan) {
    nlohmann::json filters = nlohmann::json::array();
    for (const auto &f : plan.filters) filters.push_back({f.include ? "include" : "exclude", f.pattern});
    nlohmann::json items = nlohmann::json::array();
    for (const auto &item : plan.copies) items.push_back(item_json(item));
    nlohmann::json j{{"rftp_sync_plan", kVersion},
                     {"source", plan.source},
                     {"destination", plan.destination},
                     {"upload", plan.upload},
                     {"compare", compare_name(plan.compare)},
                     {"delete", plan.remove_extraneous},
                     {"max_delete", plan.max_delete ? nlohmann::json(*plan.max_delete) : nlohmann::json(nullptr)},
                     {"max_delete_percent", plan.max_delete_percent},
                     {"filters", filters},
                     {"backup_dir", plan.backup_dir},
                     {"only", plan.only ? nlohmann::json(*plan.only) : nlohmann::json(nullptr)},
                     {"destination_exists", plan.destination_exists},
                     {"directories_to_make", plan.directories_to_make},
                     {"unchanged", plan.unchanged},
                     {"to_delete", plan.to_delete},
                     {"copies", items}};
    return write_whole_file(file, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "the plan");
}

Outcome<PlanFile> read_plan(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return fail_as(ExitCode::usage, "cannot read the plan " + file + ": " + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    try {
        const auto j = nlohmann::json::parse(text.str());
        if (j.value("rftp_sync_plan", 0) != kVersion)
            return fail_as(ExitCode::usage, file + " is not a plan of this rftp (rftp sync --plan-only writes one)");
        PlanFile plan;
        plan.source = j.at("source").get<std::string>();
        plan.destination = j.at("destination").get<std::string>();
        plan.upload = j.at("upload").get<bool>();
        const std::string compare = j.at("compare").get<std::string>();
        plan.compare = compare == "size" ? Compare::size : compare == "checksum" ? Compare::checksum : Compare::size_and_time;
        plan.remove_extraneous = j.at("delete").get<bool>();
        if (!j.at("max_delete").is_null()) plan.max_delete = j.at("max_delete").get<uint64_t>();
        plan.max_delete_percent = j.at("max_delete_percent").get<bool>();
        for (const auto &f : j.at("filters")) plan.filters.push_back({f.at(0) == "include", f.at(1).get<std::string>()});
        plan.backup_dir = j.at("backup_dir").get<std::string>();
        if (!j.at("only").is_null()) plan.only = j.at("only").get<std::set<std::string>>();
        plan.destination_exists = j.at("destination_exists").get<bool>();
        plan.directories_to_make = j.at("directories_to_make").get<std::vector<std::string>>();
        plan.unchanged = j.at("unchanged").get<std::size_t>();
        plan.to_delete = j.at("to_delete").get<std::size_t>();
        for (const auto &item : j.at("copies")) plan.copies.push_back(item_of(item));
        return plan;
    } catch (const std::exception &e) {
        return fail_as(ExitCode::usage, "the plan " + file + " is damaged: " + e.what());
    }
}

}  // namespace rftp::client
