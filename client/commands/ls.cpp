// rftp ls URL: MLSD when the server offers MLST (printed like `ls -l`, or one
// JSON object per entry), else the server's LIST output passed through.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "client/batch/remote_tree.h"
#include "client/commands/commands.h"
#include "common/log.h"
#include "client/progress/json_events.h"
#include "client/stdout_output.h"
#include "protocol/mlsx_facts.h"

namespace rftp::client {
namespace {

// "0755" -> "rwxr-xr-x"; empty when the fact is missing or odd.
std::string mode_string(const std::optional<std::string> &unix_mode) {
    if (!unix_mode || unix_mode->empty() || unix_mode->size() > 4) return {};
    unsigned mode = 0;
    for (char c : *unix_mode) {
        if (c < '0' || c > '7') return {};
        mode = mode * 8 + static_cast<unsigned>(c - '0');
    }
    std::string s;
    for (int shift = 6; shift >= 0; shift -= 3) {
        s += (mode >> shift) & 4 ? 'r' : '-';
        s += (mode >> shift) & 2 ? 'w' : '-';
        s += (mode >> shift) & 1 ? 'x' : '-';
    }
    return s;
}

char type_letter(const std::string &type) {
    if (type == "dir" || type == "cdir" || type == "pdir") return 'd';
    if (type.find("symlink") != std::string::npos) return 'l';
    if (type == "file") return '-';
    return '?';
}

void print_entry(const ftp::MlsxEntry &e, bool json, const std::string &shown_name) {
    if (json) {
        nlohmann::json ev{{"event", "entry"}, {"name", e.name}, {"type", e.type()}};
        if (auto s = e.size()) ev["size"] = *s;
        if (auto m = e.modify()) ev["modify"] = *m;
        if (auto p = e.fact("perm")) ev["perm"] = *p;
        ev["facts"] = e.facts;
        emit_json_event(ev);
        return;
    }
    std::string perms = mode_string(e.fact("unix.mode"));
    if (perms.empty()) perms = e.fact("perm").value_or("");
    std::string size = e.size() ? std::to_string(*e.size()) : "-";
    std::string when = e.modify() ? ftp::format_mlsx_time(*e.modify()) : "";
    char head[64];
    std::snprintf(head, sizeof head, "%c%-9s %12s %16s ", type_letter(e.type()), perms.c_str(), size.c_str(),
                  when.c_str());
    print_to_stdout(head + shown_name + "\n");
}

}  // namespace

OutcomeStatus run_ls(CommandContext &ctx) {
    auto session = open_session(ctx.url, ctx.options);
    if (!session) return std::unexpected(session.error());
    auto listing = fetch_listing(*session, ctx.url.path, "ls " + ctx.url.path);
    if (!listing) return std::unexpected(listing.error());
    const bool machine = listing->machine;
    // On a terminal a name's escape sequences are shown, not obeyed (as ls(1)
    // does); a pipe gets the names as the server sent them.
    const bool terminal = ::isatty(STDOUT_FILENO) == 1;
    auto shown = [terminal](const std::string &text) { return terminal ? log::printable(text) : text; };

    for (const std::string &line : listing->lines()) {
        if (!machine) {
            // LIST -a (fetch_listing) may name the directory and its parent.
            if (RemoteEntry e; parse_unix_list_line(line, e) && (e.name == "." || e.name == "..")) continue;
            if (ctx.options.json) emit_json_event({{"event", "entry"}, {"line", line}});
            else print_to_stdout(shown(line) + "\n");
            continue;
        }
        auto entry = ftp::parse_mlsx_line(line);
        if (!entry) {
            ctx.note("skipping unreadable MLSD line: " + entry.error().message);
            continue;
        }
        if (entry->type() == "cdir" || entry->type() == "pdir") continue;  // "." and ".."
        print_entry(*entry, ctx.options.json, shown(entry->name));
    }
    flush_stdout();
    close_session(*session);
    return {};
}

}  // namespace rftp::client
