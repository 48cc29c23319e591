// Machine listings (RFC 3659 §7): every MLSD line, and the entry line of an
// MLST reply, is "fact=value;fact=value; pathname". Fact names are
// case-insensitive; the pathname follows the single space and may itself
// contain spaces or semicolons. The client parses these; rftpd formats them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::ftp {

struct MlsxEntry {
    std::map<std::string, std::string> facts;  // names lower-cased, values as sent
    std::string name;

    // Convenience views of the common facts; absent when the server omitted them.
    std::optional<std::string> fact(std::string_view lower_name) const;
    std::string type() const;                 // "file", "dir", "cdir", "pdir", "os.unix=symlink", ... lower-cased
    std::optional<uint64_t> size() const;     // "size" fact
    std::optional<std::string> modify() const;  // "modify" fact, YYYYMMDDHHMMSS[.sss] in UTC
};

// Parses one entry. An MLSD line is an entry; the body line of an MLST reply
// is one space followed by an entry, which the caller removes. An entry
// without facts starts with the space: " name".
Result<MlsxEntry> parse_mlsx_line(std::string_view line);

// A time-val (RFC 3659: MDTM's reply, MLSx's modify fact) to whole seconds:
// "20240131120501.123" -> "20240131120501"; nullopt when it is not one.
// Servers differ in giving fractions, so seconds are what compares.
std::optional<std::string> time_val_seconds(std::string_view time_val);

// "20240131120501" -> "2024-01-31 12:05"; the input unchanged when it is not a time-val.
std::string format_mlsx_time(std::string_view time_val);

}  // namespace rftp::ftp
