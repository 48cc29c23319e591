#include "middleware/rdma/device_check.h"

#include <infiniband/verbs.h>
#include <sys/resource.h>

#include <cstdio>

#include "common/byte_size.h"

namespace rftp::middleware::rdma {

std::vector<std::string> device_names() {
    std::vector<std::string> names;
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    if (!list) return names;
    for (int i = 0; i < n; ++i) names.emplace_back(ibv_get_device_name(list[i]));
    ibv_free_device_list(list);
    return names;
}

std::optional<std::string> memlock_problem(std::size_t needed) {
    rlimit lim{};
    if (::getrlimit(RLIMIT_MEMLOCK, &lim) != 0) return std::nullopt;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= needed) return std::nullopt;
    return "the locked-memory limit (RLIMIT_MEMLOCK) is " + human_bytes(lim.rlim_cur) + ", but RDMA needs " +
           human_bytes(needed) + " pinned for its block pool: raise it with `ulimit -l unlimited` in the shell, "
           "LimitMEMLOCK=infinity in the systemd unit, or a memlock line in /etc/security/limits.conf";
}

}  // namespace rftp::middleware::rdma
