// The names a transfer in progress keeps beside its file, on either side:
// the partial file (renamed onto the file once whole) and the journal of
// how much of it is good. rftpd hides its own (".name.rftp-part"); rftp's
// sit beside the local file ("name.rftp-part"). Both sides, and the rules
// that keep other files off these names, spell them from here.
#pragma once

#include <string_view>

namespace rftp::ftp {

inline constexpr std::string_view kPartialSuffix = ".rftp-part";
inline constexpr std::string_view kJournalSuffix = ".rftp-resume";

}  // namespace rftp::ftp
