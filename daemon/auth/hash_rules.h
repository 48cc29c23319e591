// What every password hash format shares: the most memory one check may
// take, and the one error an unusable hash gives. The error's text never
// quotes the hash: a plain password pasted into the config by mistake must
// not end up in a log.
#pragma once

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace rftp::daemon {

// Memory of one check (scrypt and yescrypt: 128 * r * N). Without a bound a
// hostile or mistyped hash would make every login take gigabytes.
constexpr uint64_t kMaxHashMemoryBytes = 256ull << 20;

inline std::unexpected<Error> malformed_hash(std::string_view why) {
    return fail_msg("malformed password hash: " + std::string(why), -EINVAL);
}

}  // namespace rftp::daemon
