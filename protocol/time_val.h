// RFC 3659 time-vals ("YYYYMMDDHHMMSS[.sss]", always UTC): what MDTM answers,
// what MLSx's modify fact holds, and what MFMT (draft-somers-ftp-mfxx) sets.
// rftpd parses the MFMT argument with these; rftp turns listed times into
// seconds to compare them with local files, and local times into MFMT's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rftp::ftp {

struct TimeVal {
    int64_t seconds = 0;   // since the Unix epoch, UTC
    uint32_t nanos = 0;    // the fraction, if any, up to nine digits
};

// A whole, valid time-val: 14 digits of a real date and time (a leap second
// 60 is taken as 59), then optionally '.' and 1 to 9 digits. Anything else,
// including trailing text, is nullopt.
std::optional<TimeVal> parse_time_val(std::string_view text);

// Whole seconds as a time-val, "20240131120501".
std::string format_time_val(int64_t seconds);

}  // namespace rftp::ftp
