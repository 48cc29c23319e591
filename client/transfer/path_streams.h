// What a long path asks of TCP, said to the user. One socket's window grows
// only to the kernel's receive buffer ceiling (net.ipv4.tcp_rmem), so one
// stream moves at most a window per round trip: 3 MiB of Linux's default
// 6 MiB is 60 MB/s at 50 ms. When the control connection's round trip at
// kPathTarget holds more than the -P streams' windows, a file larger than
// one block says so, with what would fill the path (docs/config.md, "Long
// paths: windows").
//
// Advice, not a default: in make bench-wan more streams moved less (the
// lab guest's one CPU pays for each stream more than its window brings).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/session.h"

namespace rftp::client {

inline constexpr uint64_t kPathTargetBytesPerSecond = 1'250'000'000;  // a 10 Gb/s path
inline constexpr unsigned kMostStreamsForPath = 8;

// The round trip the kernel measured on a TCP socket (TCP_INFO: the least
// seen), in microseconds; 0 when it cannot tell.
uint32_t path_rtt_us(int fd);

// The largest window one TCP socket here may offer: half the receive
// buffer's ceiling (the rest goes to the kernel's own bookkeeping).
uint64_t window_ceiling_bytes();

// Streams whose windows cover rtt_us at kPathTarget: 1 on a short path,
// at most kMostStreamsForPath and server_max (0: no limit said).
unsigned streams_for_path(uint32_t rtt_us, uint64_t window_bytes, unsigned server_max);

// The advice for this session when streams TCP streams cannot fill its
// path; nullopt when they can, or the round trip is unknown.
std::optional<std::string> long_path_advice(const Session &session, unsigned streams);

}  // namespace rftp::client
