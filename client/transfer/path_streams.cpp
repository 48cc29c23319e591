#include "client/transfer/path_streams.h"

#include <linux/tcp.h>  // struct tcp_info with tcpi_min_rtt, which glibc's lacks
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include <cstddef>

#include <algorithm>
#include <fstream>
#include <string>

namespace rftp::client {

uint32_t path_rtt_us(int fd) {
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0) return 0;
    // The smoothed round trip of a control connection counts the server's
    // time to answer and delayed ACKs too; the least one seen is the path.
    // (~0: no sample yet.)
    const bool has_min = len >= offsetof(tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt;
    if (has_min && info.tcpi_min_rtt != 0 && info.tcpi_min_rtt != ~0u) return info.tcpi_min_rtt;
    return info.tcpi_rtt;
}

namespace {

// The third field of a "min default max" sysctl, or fallback.
uint64_t buffer_ceiling(const char *path, uint64_t fallback) {
    uint64_t min = 0, initial = 0, max = 0;
    std::ifstream in(path);
    return in >> min >> initial >> max ? max : fallback;
}

}  // namespace

uint64_t window_ceiling_bytes() {
    // Read once. Linux's defaults: 6 MiB and 4 MiB, so 3 MiB either way.
    // The peer is taken to have this host's ceilings: a download's window
    // is the server's send buffer as much as this side's receive buffer.
    static const uint64_t ceiling = [] {
        const uint64_t receive = buffer_ceiling("/proc/sys/net/ipv4/tcp_rmem", 6u << 20) / 2;
        const uint64_t send = buffer_ceiling("/proc/sys/net/ipv4/tcp_wmem", 4u << 20) / 4 * 3;
        return std::max<uint64_t>(std::min(receive, send), 64u << 10);
    }();
    return ceiling;
}

unsigned streams_for_path(uint32_t rtt_us, uint64_t window_bytes, unsigned server_max) {
    const uint64_t in_flight = kPathTargetBytesPerSecond / 1'000'000 * rtt_us;  // bytes a round trip holds
    const uint64_t wanted = (in_flight + window_bytes - 1) / std::max<uint64_t>(window_bytes, 1);
    const unsigned most = server_max ? std::min(kMostStreamsForPath, server_max) : kMostStreamsForPath;
    return static_cast<unsigned>(std::clamp<uint64_t>(wanted, 1, most));
}

namespace {

unsigned cpus_to_run_on() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return static_cast<unsigned>(CPU_COUNT(&set));
}

}  // namespace

unsigned tcp_streams_for(const Session &session, const Options &o, uint64_t bytes) {
    if (o.parallel_given) return o.parallel;
    static const bool one_cpu = cpus_to_run_on() <= 1;
    if (one_cpu) return 1;
    const uint64_t blocks = (bytes + o.block_size - 1) / std::max<uint64_t>(o.block_size, 1);
    const unsigned path = streams_for_path(session.control_rtt_us, window_ceiling_bytes(), session.features.parallel_max);
    return static_cast<unsigned>(std::clamp<uint64_t>(blocks, 1, path));
}

std::optional<std::string> long_path_advice(const Session &session, const Options &o, unsigned streams) {
    const uint64_t window = window_ceiling_bytes();
    // Not the bound of streams_for_path: the advice is for what the path needs.
    const uint64_t rtt = session.control_rtt_us;
    if (rtt == 0 || kPathTargetBytesPerSecond / 1'000'000 * rtt <= window * streams) return std::nullopt;
    const unsigned wanted = streams_for_path(session.control_rtt_us, window, session.features.parallel_max);
    const uint64_t ms = (rtt + 500) / 1000;
    const uint64_t cap_mb = window * streams / rtt;  // bytes/us = MB/s
    std::string what = "raise net.ipv4.tcp_rmem and tcp_wmem on both hosts";
    if (o.parallel_given && streams < wanted) what += ", or try -P " + std::to_string(wanted);
    return "the round trip to the server is " + std::to_string(ms) + " ms: " + std::to_string(streams) +
           (streams == 1 ? " TCP stream" : " TCP streams") + " of at most " + std::to_string(window >> 20) +
           " MiB window each (net.ipv4.tcp_rmem's and tcp_wmem's ceilings) carry at most " + std::to_string(cap_mb) +
           " MB/s; " + what + " (docs/config.md, \"Long paths: windows\")";
}

}  // namespace rftp::client
