// Memory-to-memory mode: an upload (STOR or RSTR) to exactly this name is
// received, checked and dropped by rftpd. It is the one name not resolved
// beneath the user's root, and it opens nothing the client names; rftp
// knows it too, since nothing is stored there to compare a digest with.
#pragma once

namespace rftp::ftp {

inline constexpr const char *kDiscardPath = "/dev/null";

}  // namespace rftp::ftp
