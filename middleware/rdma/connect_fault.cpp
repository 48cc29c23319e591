#include "middleware/rdma/connect_fault.h"

#include <cstdlib>

#include "middleware/test_switches.h"

namespace rftp::middleware::rdma {

uint16_t test_connect_from_port() {
    static const uint16_t port = [] {
        const char *v = test_switch("RFTP_TEST_RDMA_CONNECT_FROM");
        if (!v) return 0L;
        long p = std::strtol(v, nullptr, 10);
        return p > 0 && p < 65536 ? p : 0L;
    }();
    return port;
}

}  // namespace rftp::middleware::rdma
