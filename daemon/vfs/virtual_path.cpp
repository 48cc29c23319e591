// Lexical normalization of client paths (declared in user_root.h). It only
// decides which name the client means; keeping the result inside the root is
// the job of openat2(RESOLVE_BENEATH) in UserRoot, which also sees symlinks.
#include <linux/limits.h>

#include <vector>

#include "daemon/vfs/user_root.h"
#include "protocol/partial_names.h"

namespace rftp::daemon {
namespace {

// Splits on '/' and applies "." and ".." to stack; ".." at the top stays at "/".
Status push_components(std::string_view path, std::vector<std::string_view> &stack) {
    while (!path.empty()) {
        const size_t slash = path.find('/');
        std::string_view part = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part.size() > NAME_MAX) return fail_msg("path component longer than 255 bytes", -ENAMETOOLONG);
        if (part == "..") {
            if (!stack.empty()) stack.pop_back();
            continue;
        }
        stack.push_back(part);
    }
    return {};
}

}  // namespace

Result<std::string> resolve_virtual_path(std::string_view cwd, std::string_view arg) {
    if (arg.empty()) return fail_msg("empty path", -EINVAL);
    // A NUL would silently cut the path short at the system call.
    if (arg.find('\0') != std::string_view::npos || cwd.find('\0') != std::string_view::npos) {
        return fail_msg("path contains a NUL byte", -EINVAL);
    }
    if (arg.size() >= PATH_MAX || cwd.size() >= PATH_MAX) return fail_msg("path too long", -ENAMETOOLONG);

    std::vector<std::string_view> stack;
    if (arg.front() != '/') {
        if (auto ok = push_components(cwd, stack); !ok) return fail(ok.error());
    }
    if (auto ok = push_components(arg, stack); !ok) return fail(ok.error());

    if (stack.empty()) return std::string("/");
    std::string out;
    for (auto part : stack) {
        out += '/';
        out += part;
    }
    if (out.size() >= PATH_MAX) return fail_msg("path too long", -ENAMETOOLONG);
    return out;
}

}  // namespace rftp::daemon
