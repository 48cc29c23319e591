#include "middleware/integrity/block_checksum.h"

#include <isa-l/crc.h>

#include <atomic>
#include <climits>
#include <cstdlib>

#include "middleware/test_switches.h"
#include "protocol/big_endian.h"

namespace rftp::middleware {

void Crc32cRunning::add(std::span<const uint8_t> bytes) {
    // ISA-L's iSCSI CRC leaves out the final inversion, and takes an int length.
    const uint8_t *p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
        int n = static_cast<int>(std::min<std::size_t>(left, INT_MAX / 2));
        state_ = crc32_iscsi(const_cast<uint8_t *>(p), n, state_);
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

uint32_t crc32c(std::span<const uint8_t> bytes) {
    Crc32cRunning crc;
    crc.add(bytes);
    return crc.value();
}

void put_block_trailer(uint8_t *block, uint32_t length, uint32_t crc) { wire::put_be<uint32_t>(block + length, crc); }

uint32_t block_trailer(const uint8_t *block, uint32_t length) { return wire::get_be<uint32_t>(block + length); }

namespace {

// "N": the next N blocks. "N/K": N blocks, each followed by K that pass
// (a link that damages a block now and then).
struct FaultPlan {
    long blocks = 0, spacing = 0;
};

const FaultPlan &fault_plan() {
    static const FaultPlan plan = [] {
        FaultPlan p;
        if (const char *v = test_switch("RFTP_TEST_FLIP_BLOCKS")) {
            char *rest = nullptr;
            p.blocks = std::strtol(v, &rest, 10);
            if (rest && *rest == '/') p.spacing = std::strtol(rest + 1, nullptr, 10);
        }
        return p;
    }();
    return plan;
}

}  // namespace

bool fault_flips_armed() { return fault_plan().blocks > 0; }

bool take_fault_flip() {
    const FaultPlan &plan = fault_plan();
    static std::atomic<long> seen{0};
    if (plan.blocks <= 0) return false;
    long n = seen.fetch_add(1);
    long period = plan.spacing + 1;
    return n % period == 0 && n / period < plan.blocks;
}

}  // namespace rftp::middleware
