// How a verbs call that fails under a running transfer is told. The kernel
// answers EIO once the device is gone (disassociated); that is the
// network's failure, and EIO would read as a disk's (rftpd: 451 local
// error; rftp: exit 6, a local file). ENODEV is what it is, and no file
// system gives it for a file's read or write.
#pragma once

#include <cerrno>
#include <string>

#include "common/result.h"

namespace rftp::middleware::rdma {

inline std::unexpected<Error> fail_verbs(const std::string &context, int err) {
    return fail_errno(context, err == EIO ? ENODEV : err);
}

}  // namespace rftp::middleware::rdma
