#include "client/sync/plan_report.h"

#include <cstdio>

#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "common/byte_size.h"
#include "common/log.h"

namespace rftp::client {
namespace {

std::string counted(const SyncPlan &plan, SyncAction action, const char *what, bool with_bytes) {
    auto t = plan.count(action);
    std::string text = std::to_string(t.files) + " " + what;
    if (with_bytes) text += " (" + human_bytes(static_cast<double>(t.bytes)) + ")";
    return text;
}

void show_item(const CommandContext &ctx, const SyncItem &item) {
    if (ctx.options.json) {
        nlohmann::json ev{{"event", "plan"}, {"path", item.path}, {"action", action_name(item.action)}, {"size", item.size}};
        if (!item.reason.empty()) ev["reason"] = item.reason;
        emit_json_event(ev);
        return;
    }
    if (item.action == SyncAction::unchanged && ctx.options.verbose == 0) return;
    std::string line = action_name(item.action);
    if (!item.reason.empty()) line += " (" + item.reason + ")";
    line += "\t" + log::printable(item.path) + "\n";
    print_to_stdout(line);
}

}  // namespace

std::string plan_counts(const SyncPlan &plan) {
    return counted(plan, SyncAction::copy_new, "new", true) + ", " + counted(plan, SyncAction::copy_changed, "changed", true) +
           ", " + counted(plan, SyncAction::unchanged, "unchanged", false) + ", " +
           counted(plan, SyncAction::remove, "to delete", true);
}

void show_plan(const CommandContext &ctx, const SyncPlan &plan) {
    for (const auto &item : plan.items) show_item(ctx, item);
    if (!ctx.options.json && !ctx.options.quiet) std::fprintf(stderr, "rftp: sync --dry-run: %s\n", plan_counts(plan).c_str());
}

}  // namespace rftp::client
