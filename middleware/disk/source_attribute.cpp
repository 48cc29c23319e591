#include "middleware/disk/source_attribute.h"

#include <sys/xattr.h>

namespace rftp::middleware {
namespace {

constexpr const char *kAttribute = "user.rftp.source";

}  // namespace

std::optional<std::string> recorded_source(int fd) {
    char value[128];
    ssize_t n = ::fgetxattr(fd, kAttribute, value, sizeof value);
    if (n <= 0) return std::nullopt;
    return std::string(value, static_cast<std::size_t>(n));
}

void record_source(int fd, const std::string &source) {
    (void)::fsetxattr(fd, kAttribute, source.data(), source.size(), 0);
}

void forget_source(int fd) { (void)::fremovexattr(fd, kAttribute); }

}  // namespace rftp::middleware
