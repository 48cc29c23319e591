#include "client/batch/remote_tree.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

#include "client/commands/transfer_steps.h"
#include "client/data_connection.h"
#include "common/ascii_case.h"
#include "common/decimal.h"
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

Outcome<DirectoryMade> make_or_find_remote_directory(Session &session, const std::string &path) {
    auto made = session.control.command("MKD " + path);
    if (!made) return std::unexpected(made.error());
    if (made->positive_completion()) return DirectoryMade::made;
    // MKD's refusal does not say whether the directory exists; CWD does.
    auto exists = remote_is_directory(session, path);
    if (!exists) return std::unexpected(exists.error());
    if (*exists) return DirectoryMade::found_there;
    return std::unexpected(refused("mkdir " + path, *made).error());
}

OutcomeStatus ensure_remote_directory(Session &session, const std::string &path) {
    auto made = make_or_find_remote_directory(session, path);
    if (!made) return std::unexpected(made.error());
    return {};
}

bool is_safe_entry_name(const std::string &name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
           name.find('\0') == std::string::npos;
}

namespace {

bool is_month(std::string_view t) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (std::string_view m : kMonths)
        if (t == m) return true;
    return false;
}

bool is_number(std::string_view t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos;
}

// "12:00" or "2023".
bool is_time_or_year(std::string_view t) {
    if (t.size() == 5 && t[2] == ':') return is_number(t.substr(0, 2)) && is_number(t.substr(3));
    return t.size() == 4 && is_number(t);
}

}  // namespace

bool parse_unix_list_line(const std::string &line, RemoteEntry &entry) {
    if (line.empty() || (line[0] != '-' && line[0] != 'd')) return false;
    // Fields up to the date, whose place anchors the rest: mode, links,
    // owner, an optional group (some servers leave it out), size, then
    // month, day and time or year, then the name, which may hold spaces.
    struct Field {
        std::size_t begin, end;
    };
    std::vector<Field> fields;
    for (std::size_t pos = 0; fields.size() < 9;) {
        pos = line.find_first_not_of(' ', pos);
        if (pos == std::string::npos) break;
        std::size_t end = std::min(line.find(' ', pos), line.size());
        fields.push_back({pos, end});
        pos = end;
    }
    auto text = [&](std::size_t i) { return std::string_view(line).substr(fields[i].begin, fields[i].end - fields[i].begin); };
    for (std::size_t month = 4; month + 2 < fields.size() && month <= 5; ++month) {
        const std::size_t day = month + 1, time = month + 2;
        if (!is_month(text(month)) || !is_number(text(day)) || text(day).size() > 2 || !is_time_or_year(text(time)))
            continue;
        std::size_t name = line.find_first_not_of(' ', fields[time].end);
        if (name == std::string::npos) return false;
        entry.size = parse_decimal(text(month - 1));
        entry.name = line.substr(name);
        entry.is_directory = line[0] == 'd';
        return true;
    }
    return false;
}

namespace {

// "lrwxrwxrwx", "crw-rw----", "Dr--r--r--": a type letter, then nine
// permission letters (the tenth column may hold +, @ or . for ACLs).
bool starts_with_a_mode(const std::string &line) {
    if (line.size() < 10 || !std::isalpha(static_cast<unsigned char>(line[0]))) return false;
    return std::all_of(line.begin() + 1, line.begin() + 10,
                       [](char c) { return std::string_view("rwxsStTlL-").find(c) != std::string_view::npos; });
}

// "total 12", or its translation ("insgesamt 12") from a server's ls.
bool is_total_line(const std::string &line) {
    const auto space = line.find(' ');
    return space != std::string::npos && space > 0 && space + 1 < line.size() &&
           line.find_first_not_of("0123456789", space + 1) == std::string::npos;
}

// The name a LIST line of another type than - or d gives ("name -> target"
// for a link), else the whole line.
std::string listed_name(const std::string &line) {
    RemoteEntry as_file;
    if (!parse_unix_list_line("-" + line.substr(1), as_file)) return line;
    return as_file.name;
}

std::string not_fetched(const std::string &dir, const std::string &entry, const std::string &kind) {
    return "not fetched: " + log::quote(entry) + " in " + dir + " is a " + kind +
           " (rftp copies files and the directories holding them; fetch a link's target by its own name)";
}

// LIST -a: vsftpd and ProFTPD leave names beginning with a dot out of a
// plain LIST, and a Zarr store's .zarray files are data. A server that
// refuses it (5xx) is asked plainly, as wget does; only when that plain LIST
// works is the option taken for refused, for the rest of the session (a 550
// for one unreadable directory says nothing about the option).
enum class ListForm { machine, with_dotfiles, plain, tree };

Outcome<RawListing> fetch_listing_as(Session &session, const std::string &path, const std::string &what,
                                     ListForm form) {
    RawListing listing;
    listing.machine = form == ListForm::machine || form == ListForm::tree;
    // Listings always use one plain connection, whatever OPTS PARALLEL says.
    auto socks = open_data_connections(session, 1);
    if (!socks) return std::unexpected(socks.error());
    auto started = session.control.command(form == ListForm::machine         ? "MLSD " + path
                                           : form == ListForm::tree          ? "MLSR " + path
                                           : form == ListForm::with_dotfiles ? "LIST -a " + path
                                                                             : "LIST " + path);
    if (!started) return std::unexpected(started.error());
    if (form == ListForm::with_dotfiles && started->code >= 500) {
        socks->clear();
        auto plainly = fetch_listing_as(session, path, what, ListForm::plain);
        if (plainly) session.list_refuses_options = true;
        return plainly;
    }
    if (!started->positive_preliminary()) return refused(what, *started);
    auto relays = secure_data_connections(session, *socks);
    if (!relays) {
        abort_transfer(session);
        return std::unexpected(relays.error());
    }
    const int fd = relays->empty() ? (*socks)[0].get() : relays->front()->engine_fd();
    auto text = read_all(fd, kMaxListingBytes);
    if (text && !relays->empty() && relays->front()->cut_short())
        text = fail_as(ExitCode::connection, "listing: " + relays->front()->failure());
    if (text && !relays->empty()) (void)relays->front()->finish(session.control.timeout() * 1000);
    relays->clear();
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
    // vsftpd says "226 Transfer done (but failed to open directory)." after
    // an empty listing of a directory it could not read: that directory is
    // not empty, and a sync must not delete what it holds elsewhere.
    if (ascii_lower(done->text()).find("failed to open directory") != std::string::npos)
        return fail_as(ExitCode::remote_file, what + ": the server could not read the directory: " + done->text());
    listing.text = std::move(*text);
    return listing;
}

}  // namespace

// One spelling per directory: "/a/b" for "/a/b/", "/a//b" and "/a/./b".
std::string listing_key(const std::string &path) {
    std::string key = "/";
    std::size_t at = 0;
    while (at < path.size()) {
        std::size_t end = path.find('/', at);
        if (end == std::string::npos) end = path.size();
        const std::string part = path.substr(at, end - at);
        if (!part.empty() && part != ".") key += (key.size() > 1 ? "/" : "") + part;
        at = end + 1;
    }
    return key;
}

// MLSR's lines name entries by their path below the top; each directory's
// share goes under its own key, renamed back to MLSD's bare names. The
// server sends a directory's cdir line, then its entries, before the next
// directory's: a line that does not read, an entry of another directory
// than the last cdir's, or a directory twice, and none of it is used (the
// walk then lists each directory, and says what it could not read).
std::optional<std::map<std::string, std::string>> split_tree_listing(const std::string &top, const RawListing &tree) {
    std::map<std::string, std::string> by_dir;
    const std::string base = listing_key(top);
    std::string current;  // the relative path of the last cdir; "." for the top
    std::string *text = nullptr;
    for (const std::string &line : tree.lines()) {
        auto parsed = ftp::parse_mlsx_line(line);
        if (!parsed || parsed->name.empty()) return std::nullopt;
        const std::string facts = line.substr(0, line.size() - parsed->name.size());
        const std::string &relative = parsed->name;
        if (parsed->type() == "cdir") {
            auto [it, fresh] = by_dir.emplace(listing_key(base + "/" + relative), facts + ".\r\n");
            if (!fresh) return std::nullopt;
            current = relative, text = &it->second;
            continue;
        }
        const auto slash = relative.rfind('/');
        const std::string parent = slash == std::string::npos ? "." : relative.substr(0, slash);
        if (!text || parent != current) return std::nullopt;
        *text += facts + relative.substr(slash + 1) + "\r\n";
    }
    return by_dir;
}

Outcome<RawListing> fetch_listing(Session &session, const std::string &path, const std::string &what) {
    if (auto ahead = session.tree_listings.find(listing_key(path)); ahead != session.tree_listings.end()) {
        RawListing listing{.machine = true, .text = std::move(ahead->second)};
        session.tree_listings.erase(ahead);
        return listing;
    }
    const ListForm form = session.features.mlst          ? ListForm::machine
                          : session.list_refuses_options ? ListForm::plain
                                                         : ListForm::with_dotfiles;
    return fetch_listing_as(session, path, what, form);
}

Outcome<TreeListingsAhead> list_tree_ahead(Session &session, const std::string &top) {
    session.tree_listings.clear();
    TreeListingsAhead ahead(session);
    if (!session.features.mlsr || !session.features.mlst) return ahead;
    auto tree = fetch_listing_as(session, top, "list the tree " + top, ListForm::tree);
    if (!tree) {
        if (session_lost(tree.error())) return std::unexpected(tree.error());
        log::info(tree.error().message + "; listing each directory instead");
        return ahead;
    }
    auto split = split_tree_listing(top, *tree);
    if (!split) {
        log::info("the tree listing of " + top + " is out of order; listing each directory instead");
        return ahead;
    }
    session.tree_listings = std::move(*split);
    log::debug("MLSR " + top + ": " + std::to_string(session.tree_listings.size()) + " directories");
    return ahead;
}

std::vector<std::string> RawListing::lines() const {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) out.push_back(std::move(line));
    }
    return out;
}

Outcome<RemoteDirectory> list_remote_directory(Session &session, const std::string &path) {
    auto listing = fetch_listing(session, path, "list " + path);
    if (!listing) return std::unexpected(listing.error());
    bool machine = listing->machine;
    RemoteDirectory dir;
    for (const std::string &line : listing->lines()) {
        RemoteEntry entry;
        if (machine) {
            auto parsed = ftp::parse_mlsx_line(line);
            if (!parsed) {
                dir.unusable.push_back("unreadable MLSD line in " + path + ": " + parsed.error().message);
                continue;
            }
            std::string type = parsed->type();
            if (type == "cdir") dir.unique = parsed->fact("unique");
            if (type == "cdir" || type == "pdir") continue;
            if (type != "file" && type != "dir") {  // symlinks (OS.unix=slink), devices
                dir.skipped.push_back(not_fetched(path, parsed->name, type));
                continue;
            }
            entry.name = parsed->name;
            entry.is_directory = type == "dir";
            entry.size = parsed->size();
            entry.unique = parsed->fact("unique");
            entry.modify = parsed->modify();
        } else if (!parse_unix_list_line(line, entry)) {
            // A file's or a directory's line that does not read is a failed
            // file, never a silent gap; anything else ("total 12", links,
            // devices) is not an entry to fetch.
            if (line[0] == '-' || line[0] == 'd')
                dir.unusable.push_back("unreadable LIST line in " + path + ": " + log::quote(line));
            else if (starts_with_a_mode(line))  // l, b, c, p, s; Solaris D and P, BSD w, HP n
                dir.skipped.push_back(not_fetched(path, listed_name(line), line[0] == 'l' ? "symbolic link" : "special file"));
            else if (!is_total_line(line))
                // A DOS or EPLF listing rftp cannot read at all: every line of it.
                dir.unusable.push_back("LIST line in " + path + " rftp does not read (not a Unix listing): " +
                                       log::quote(line));
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
