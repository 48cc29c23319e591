// The names a transfer in progress keeps beside its file, on either side:
// the partial file (renamed onto the file once whole) and the journal of
// how much of it is good. rftpd hides its own (".name.rftp-part"); rftp's
// sit beside the local file ("name.rftp-part"). Both sides, and the rules
// that keep other files off these names, spell them from here.
#pragma once

#include <string>
#include <string_view>

namespace rftp::ftp {

inline constexpr std::string_view kPartialSuffix = ".rftp-part";
inline constexpr std::string_view kJournalSuffix = ".rftp-resume";

// An upload's partial file on rftpd: "dir/.name.rftp-part" for "dir/name",
// ".name.rftp-part" for "name" (in the same directory, whichever that is).
std::string server_partial_name(std::string_view path);
// The journal beside a partial file on rftpd: ".name.rftp-resume".
std::string server_journal_name(std::string_view partial_path);

// A download's partial file and journal on the client: "name.rftp-part",
// "name.rftp-resume" beside the local file.
std::string client_partial_name(std::string_view path);
std::string client_journal_name(std::string_view path);

// Whether path is one of rftpd's partial files or journals.
bool is_transfer_bookkeeping(std::string_view path);

}  // namespace rftp::ftp
