// Directory listings as clients expect them: LIST in the `ls -l` shape most
// clients parse, NLST as bare names, MLSD/MLST as RFC 3659 facts.
#pragma once

#include <sys/stat.h>

#include <ctime>
#include <string>
#include <string_view>

namespace rftp::daemon {

// "-rw-r--r--   1 ftp      ftp          1234 Nov 22 10:01 name". Owner and
// group are always "ftp": numeric ids of the host are nobody's business.
std::string format_list_line(const struct stat &st, std::string_view name, std::time_t now);

// "type=file;size=1234;modify=20261122100102;perm=rwadf; name"
// type is cdir for the listed directory itself (MLSD's "."). extra_facts
// ("fact=value;" each) go after the standard ones.
std::string format_mlsx_line(const struct stat &st, std::string_view name, bool writable, bool is_cdir = false,
                             std::string_view extra_facts = {});

}  // namespace rftp::daemon
