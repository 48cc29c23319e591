#include "client/netrc.h"

#include <algorithm>
#include <cctype>

#include "common/ascii_case.h"

namespace rftp::client {
namespace {

class Tokenizer {
public:
    explicit Tokenizer(std::string_view text) : text_(text) {}

    // Next token, or nullopt at the end; fails on an unterminated quote.
    Result<std::optional<std::string>> next() {
        skip_space_and_comments();
        if (pos_ >= text_.size()) return std::optional<std::string>{};
        std::string token;
        if (text_[pos_] == '"') {
            ++pos_;
            while (pos_ < text_.size() && text_[pos_] != '"') {
                if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
                token += text_[pos_++];
            }
            if (pos_ >= text_.size()) return fail_msg("unterminated quoted token");
            ++pos_;
            return std::optional<std::string>{std::move(token)};
        }
        while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])))
            token += text_[pos_++];
        return std::optional<std::string>{std::move(token)};
    }

    // A macdef body runs from the line after its name to the first empty
    // line; a file written on Windows ends its lines, and so the body, in CRLF.
    void skip_macro_body() {
        std::size_t eol = text_.find('\n', pos_);
        while (eol != std::string_view::npos) {
            std::size_t start = eol + 1;
            eol = text_.find('\n', start);
            std::string_view line = text_.substr(start, eol == std::string_view::npos ? text_.npos : eol - start);
            if (line.empty() || line == "\r") {
                pos_ = eol == std::string_view::npos ? text_.size() : eol + 1;
                return;
            }
        }
        pos_ = text_.size();
    }

    std::size_t line() const {
        std::size_t n = 1;
        for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) n += text_[i] == '\n';
        return n;
    }

private:
    void skip_space_and_comments() {
        while (pos_ < text_.size()) {
            if (std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
            else if (text_[pos_] == '#') {
                std::size_t eol = text_.find('\n', pos_);
                pos_ = eol == std::string_view::npos ? text_.size() : eol + 1;
            } else break;
        }
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

}  // namespace

Result<std::vector<NetrcEntry>> parse_netrc(std::string_view text) {
    std::vector<NetrcEntry> entries;
    Tokenizer tokens(text);
    auto where = [&] { return "netrc line " + std::to_string(tokens.line()) + ": "; };
    auto value_of = [&](const std::string &key) -> Result<std::string> {
        auto v = tokens.next();
        if (!v) return fail_msg(where() + v.error().message);
        if (!*v) return fail_msg(where() + "'" + key + "' needs a value");
        return std::move(**v);
    };
    for (;;) {
        auto tok = tokens.next();
        if (!tok) return fail_msg(where() + tok.error().message);
        if (!*tok) break;
        const std::string &key = **tok;
        if (key == "machine") {
            auto name = value_of(key);
            if (!name) return fail(name.error());
            entries.push_back(NetrcEntry{.machine = *name});
        } else if (key == "default") {
            entries.push_back(NetrcEntry{.is_default = true});
        } else if (key == "login" || key == "password" || key == "account") {
            auto value = value_of(key);
            if (!value) return fail(value.error());
            if (entries.empty()) return fail_msg(where() + "'" + key + "' before any 'machine' or 'default'");
            NetrcEntry &e = entries.back();
            (key == "login" ? e.login : key == "password" ? e.password : e.account) = *value;
        } else if (key == "macdef") {
            auto name = value_of(key);
            if (!name) return fail(name.error());
            tokens.skip_macro_body();
        } else {
            return fail_msg(where() + "unknown token '" + key + "'");
        }
    }
    return entries;
}

const NetrcEntry *find_netrc_entry(const std::vector<NetrcEntry> &entries, std::string_view host,
                                   const std::optional<std::string> &user) {
    auto user_fits = [&](const NetrcEntry &e) { return !user || !e.login || *e.login == *user; };
    // Host names are case-insensitive (RFC 4343): "Data.Example" is data.example.
    auto host_fits = [&](const NetrcEntry &e) {
        return ascii_lower(e.machine) == ascii_lower(host);
    };
    for (const auto &e : entries)
        if (!e.is_default && host_fits(e) && user_fits(e)) return &e;
    for (const auto &e : entries)
        if (e.is_default && user_fits(e)) return &e;
    return nullptr;
}

}  // namespace rftp::client
