#include "client/credentials.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "client/netrc.h"
#include "client/password_prompt.h"
#include "common/unique_fd.h"

namespace rftp::client {
namespace {

std::optional<std::string> env(const char *name) {
    const char *v = std::getenv(name);
    if (!v || !*v) return std::nullopt;
    return std::string(v);
}

std::string netrc_path() {
    if (auto p = env("NETRC")) return *p;
    if (auto home = env("HOME")) return *home + "/.netrc";
    return {};
}

// The file's text; nullopt when it does not exist.
Outcome<std::optional<std::string>> read_netrc(const std::string &path) {
    if (path.empty()) return std::optional<std::string>{};
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<std::string>{};
        return fail_as(ExitCode::auth, "read " + path + ": " + std::strerror(errno));
    }
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return fail_as(ExitCode::auth, "read " + path + ": " + std::strerror(errno));
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    return std::optional<std::string>{std::move(text)};
}

}  // namespace

bool is_anonymous(const std::string &user) { return user == "anonymous" || user == "ftp"; }

Outcome<Credentials> resolve_credentials(const Url &url) {
    Credentials creds;
    creds.host = url.host;
    std::string path = netrc_path();
    auto text = read_netrc(path);
    if (!text) return std::unexpected(text.error());
    const NetrcEntry *entry = nullptr;
    std::vector<NetrcEntry> entries;
    if (*text) {
        auto parsed = parse_netrc(**text);
        if (!parsed) return fail_as(ExitCode::auth, path + ": " + parsed.error().message);
        entries = std::move(*parsed);
        entry = find_netrc_entry(entries, url.host, url.user);
    }
    if (url.user) creds.user = *url.user;
    else if (entry && entry->login) creds.user = *entry->login;
    else if (auto u = env("RFTP_USER")) creds.user = *u;
    else creds.user = "anonymous";
    // A netrc password belongs to its login; never send it for another user.
    if (entry && (!entry->login || *entry->login == creds.user)) {
        creds.netrc_password = entry->password;
        creds.account = entry->account;
    }
    return creds;
}

namespace {

// Passwords typed at the prompt, remembered for the process: many-file
// transfers log in once per session, from several threads.
std::mutex prompt_mutex;
std::map<std::string, std::string> typed_passwords;

std::string prompt_key(const Credentials &creds) { return creds.user + "@" + creds.host; }

}  // namespace

std::optional<std::string> known_password(const Credentials &creds) {
    if (creds.netrc_password) return *creds.netrc_password;
    if (auto p = env("RFTP_PASSWORD")) return *p;
    // Anonymous FTP asks for an e-mail address by convention, not a secret.
    if (is_anonymous(creds.user)) return std::string("rftp@");
    std::lock_guard lock(prompt_mutex);
    if (auto typed = typed_passwords.find(prompt_key(creds)); typed != typed_passwords.end()) return typed->second;
    return std::nullopt;
}

Outcome<std::string> password_for(const Credentials &creds) {
    if (auto known = known_password(creds)) return *known;
    // The terminal is asked once, under the lock, and the answer reused.
    std::lock_guard lock(prompt_mutex);
    const std::string key = prompt_key(creds);
    if (auto known = typed_passwords.find(key); known != typed_passwords.end()) return known->second;
    auto typed = prompt_password("Password for " + key + ": ");
    if (!typed) return std::unexpected(typed.error());
    if (*typed) {
        typed_passwords[key] = **typed;
        return **typed;
    }
    return fail_as(ExitCode::auth, "server wants a password for '" + creds.user +
                                       "' and there is no terminal to ask on; put it in ~/.netrc "
                                       "(machine " + creds.host + " login " + creds.user +
                                       " password ...) or set RFTP_PASSWORD");
}

}  // namespace rftp::client
