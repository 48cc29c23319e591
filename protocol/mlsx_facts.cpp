#include "protocol/mlsx_facts.h"

#include <cctype>
#include <charconv>

#include "common/ascii_case.h"
#include "common/decimal.h"

namespace rftp::ftp {

std::optional<std::string> MlsxEntry::fact(std::string_view lower_name) const {
    auto it = facts.find(std::string(lower_name));
    if (it == facts.end()) return std::nullopt;
    return it->second;
}

std::string MlsxEntry::type() const {
    return ascii_lower(fact("type").value_or(""));
}

std::optional<uint64_t> MlsxEntry::size() const {
    auto s = fact("size");
    return s ? parse_decimal(*s) : std::nullopt;
}

std::optional<std::string> MlsxEntry::modify() const { return fact("modify"); }

Result<MlsxEntry> parse_mlsx_line(std::string_view line) {
    std::size_t space = line.find(' ');
    if (space == std::string_view::npos) return fail_msg("MLSx line without ' pathname': '" + std::string(line) + "'");
    MlsxEntry entry;
    entry.name = std::string(line.substr(space + 1));
    if (entry.name.empty()) return fail_msg("MLSx line with an empty pathname");
    std::string_view facts = line.substr(0, space);
    while (!facts.empty()) {
        std::size_t semi = facts.find(';');
        if (semi == std::string_view::npos) return fail_msg("MLSx fact not ended by ';': '" + std::string(facts) + "'");
        std::string_view fact = facts.substr(0, semi);
        facts.remove_prefix(semi + 1);
        std::size_t eq = fact.find('=');
        if (eq == std::string_view::npos || eq == 0) return fail_msg("MLSx fact without name=value: '" + std::string(fact) + "'");
        const std::string name = ascii_lower(fact.substr(0, eq));
        entry.facts[name] = std::string(fact.substr(eq + 1));
    }
    return entry;
}

std::optional<std::string> time_val_seconds(std::string_view t) {
    constexpr std::size_t kSecondsDigits = 14;  // YYYYMMDDHHMMSS
    if (t.size() < kSecondsDigits) return std::nullopt;
    for (std::size_t i = 0; i < kSecondsDigits; ++i)
        if (!std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
    return std::string(t.substr(0, kSecondsDigits));
}

std::string format_mlsx_time(std::string_view t) {
    if (!time_val_seconds(t)) return std::string(t);
    std::string out;
    out.append(t.substr(0, 4)).append("-").append(t.substr(4, 2)).append("-").append(t.substr(6, 2));
    out.append(" ").append(t.substr(8, 2)).append(":").append(t.substr(10, 2));
    return out;
}

}  // namespace rftp::ftp
