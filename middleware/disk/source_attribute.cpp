#include "middleware/disk/source_attribute.h"

#include <sys/xattr.h>

#include <cerrno>

namespace rftp::middleware {
namespace {

constexpr const char *kAttribute = "user.rftp.source";

}  // namespace

Result<std::optional<std::string>> recorded_source(int fd) {
    char value[256];
    ssize_t n = ::fgetxattr(fd, kAttribute, value, sizeof value);
    if (n < 0 && errno == ENODATA) return std::optional<std::string>{};
    // ERANGE: longer than any record rftp writes, so not one of them.
    if (n < 0 && errno == ERANGE) return std::optional<std::string>{std::string{}};
    if (n < 0) return fail_errno("read the extended attribute user.rftp.source");
    return std::optional<std::string>{std::string(value, static_cast<std::size_t>(n))};
}

Status record_source(int fd, const std::string &source) {
    if (::fsetxattr(fd, kAttribute, source.data(), source.size(), 0) == 0) return {};
    const int err = errno;
    forget_source(fd);
    return fail_errno("record the extended attribute user.rftp.source", err);
}

void forget_source(int fd) { (void)::fremovexattr(fd, kAttribute); }

}  // namespace rftp::middleware
