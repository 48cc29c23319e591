// What a side checks before it offers or asks for RDMA: is there a device at
// all, and may this process pin as much memory as a channel needs? Each
// answer comes with a sentence that says what to change.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/rdma_connect.h"

namespace rftp::middleware::rdma {

// Names of the RDMA devices this process can open ("rxe0", "mlx5_0"); empty when none.
std::vector<std::string> device_names();

// Why `needed` bytes cannot be pinned under RLIMIT_MEMLOCK, or nullopt when they can.
std::optional<std::string> memlock_problem(std::size_t needed);


}  // namespace rftp::middleware::rdma
