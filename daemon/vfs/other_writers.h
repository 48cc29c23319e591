// Who, besides root and the user rftpd runs as, could change a file or a
// directory: rewrite the config (who logs in, which directory each sees),
// or rename a user's root away and put another directory in its place.
// What sshd insists on for a ChrootDirectory's path.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

namespace rftp::daemon {

struct OtherWriter {
    std::string who;  // "owned by uid 1000, neither root nor the user rftpd runs as", "writable by anyone (mode 0777)"
    std::string fix;  // "chown root PATH", "chmod go-w PATH"
};

// Nothing when only root and rftpd's own user (and their groups) may change
// it. A directory with the sticky bit (/tmp) lets others add entries but not
// rename or remove root's or rftpd's: its write bits do not count.
std::optional<OtherWriter> other_writer(const std::string &path, const struct stat &st);

// The first directory on the way to a user's root (resolved, absolute)
// that someone else may change, said with what to do about it. The root
// itself is the user's to fill, and the part of the path not there yet
// has nothing to check.
std::optional<std::string> root_path_problem(const std::string &root);

}  // namespace rftp::daemon
