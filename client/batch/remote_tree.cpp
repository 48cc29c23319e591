#include "client/batch/remote_tree.h"

#include <charconv>
#include <sstream>

#include "client/commands/transfer_steps.h"
#include "client/data_connection.h"
#include "common/log.h"
#include "protocol/mlsx_facts.h"

namespace rftp::client {

Outcome<bool> remote_is_directory(Session &session, const std::string &path) {
    auto reply = session.control.command("CWD " + path);
    if (!reply) return std::unexpected(reply.error());
    if (reply->code == 250) return true;
    if (reply->code == 530) return refused("CWD " + path, *reply);
    return false;
}

OutcomeStatus ensure_remote_directory(Session &session, const std::string &path) {
    auto made = session.control.command("MKD " + path);
    if (!made) return std::unexpected(made.error());
    if (made->positive_completion()) return {};
    // MKD's refusal does not say whether the directory exists; CWD does.
    auto exists = remote_is_directory(session, path);
    if (!exists) return std::unexpected(exists.error());
    if (*exists) return {};
    return refused("mkdir " + path, *made);
}

bool is_safe_entry_name(const std::string &name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\0') == std::string::npos;
}

bool parse_unix_list_line(const std::string &line, RemoteEntry &entry) {
    if (line.empty() || (line[0] != '-' && line[0] != 'd')) return false;
    // Eight fields (mode, links, owner, group, size, month, day, time/year),
    // then the name, which may itself contain spaces.
    std::size_t pos = 0;
    for (int field = 0; field < 8; ++field) {
        pos = line.find_first_not_of(' ', pos);
        if (pos == std::string::npos) return false;
        std::size_t end = line.find(' ', pos);
        if (end == std::string::npos) return false;
        uint64_t size = 0;
        if (field == 4 && std::from_chars(line.data() + pos, line.data() + end, size).ptr == line.data() + end)
            entry.size = size;
        pos = end;
    }
    pos = line.find_first_not_of(' ', pos);
    if (pos == std::string::npos) return false;
    entry.name = line.substr(pos);
    entry.is_directory = line[0] == 'd';
    return true;
}

Outcome<RawListing> fetch_listing(Session &session, const std::string &path, const std::string &what) {
    RawListing listing;
    listing.machine = session.features.mlst;
    // Listings always use one plain connection, whatever OPTS PARALLEL says.
    auto socks = open_data_connections(session, 1);
    if (!socks) return std::unexpected(socks.error());
    auto started = session.control.command((listing.machine ? "MLSD " : "LIST ") + path);
    if (!started) return std::unexpected(started.error());
    if (!started->positive_preliminary()) return refused(what, *started);
    auto text = read_all((*socks)[0].get(), kMaxListingBytes);
    socks->clear();
    if (!text) {
        // The listing's final reply is still to come: without ABOR and its
        // replies read, every later reply would answer the command before.
        abort_transfer(session);
        // Replies that never came leave the session unusable: that ends planning.
        if (session.out_of_step)
            return fail_as(ExitCode::connection, what + ": " + text.error().message +
                                                     "; the server did not answer the ABOR that followed");
        return fail_as(text.error().exit, what + ": " + text.error().message);
    }
    auto done = session.control.read_reply();
    if (!done) return std::unexpected(done.error());
    if (!done->positive_completion()) return refused(what, *done);
    listing.text = std::move(*text);
    return listing;
}

Outcome<RemoteDirectory> list_remote_directory(Session &session, const std::string &path) {
    auto listing = fetch_listing(session, path, "list " + path);
    if (!listing) return std::unexpected(listing.error());
    bool machine = listing->machine;
    RemoteDirectory dir;
    std::istringstream lines(listing->text);
    std::string line;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty()) continue;
        RemoteEntry entry;
        if (machine) {
            auto parsed = ftp::parse_mlsx_line(line);
            if (!parsed) {
                dir.unusable.push_back("unreadable MLSD line in " + path + ": " + parsed.error().message);
                continue;
            }
            std::string type = parsed->type();
            if (type == "cdir") dir.unique = parsed->fact("unique");
            if (type != "file" && type != "dir") continue;  // cdir, pdir, symlinks, devices
            entry.name = parsed->name;
            entry.is_directory = type == "dir";
            entry.size = parsed->size();
            entry.unique = parsed->fact("unique");
            entry.modify = parsed->modify();
        } else if (!parse_unix_list_line(line, entry)) {
            log::info("skipping LIST line rftp does not read: " + log::quote(line));
            continue;
        }
        // Some servers list the directory itself and its parent (ls -a).
        if (entry.name == "." || entry.name == "..") continue;
        if (!is_safe_entry_name(entry.name)) {
            dir.unusable.push_back("not fetched: unsafe name in " + path + ": " + log::quote(entry.name));
            continue;
        }
        dir.entries.push_back(std::move(entry));
    }
    return dir;
}

}  // namespace rftp::client
