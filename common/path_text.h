// Paths as text, for names shown or sent, not for opening files (the
// daemon's paths go through daemon/vfs).
#pragma once

#include <string>
#include <string_view>

namespace rftp {

// "a/b/c.bin" -> "c.bin"; a name without '/' is its own.
inline std::string basename_of(std::string_view path) {
    auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace rftp
