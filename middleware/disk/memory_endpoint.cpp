#include "middleware/disk/memory_endpoint.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

namespace rftp::middleware {

MemoryEndpoint memory_endpoint(int fd) {
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 1) return MemoryEndpoint::none;
    // Linux's memory devices (Documentation/admin-guide/devices.txt): 1:3 null, 1:5 zero.
    if (minor(st.st_rdev) == 5) return MemoryEndpoint::zeros;
    if (minor(st.st_rdev) == 3) return MemoryEndpoint::discard;
    return MemoryEndpoint::none;
}

}  // namespace rftp::middleware
