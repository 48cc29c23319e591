// How many TCP streams a file larger than one block takes when -P is not
// given. One socket's window grows only to the kernel's receive buffer
// ceiling (net.ipv4.tcp_rmem), so one stream moves at most a window per
// round trip: 3 MiB of Linux's default 6 MiB is 60 MB/s at 50 ms. On a
// long path rftp opens enough streams that their windows together cover
// the round trip at kPathTarget, up to kMostStreamsForPath and the
// server's PARALLEL limit. docs/config.md, "Long paths: windows".
#pragma once

#include <cstdint>

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

// Streams whose windows cover rtt_us at kPathTarget: 1 on a short path.
unsigned streams_for_path(uint32_t rtt_us, uint64_t window_bytes, unsigned server_max);

// What a file larger than one block takes over TCP: -P when given, else
// streams_for_path for this session's round trip.
unsigned large_file_streams(const Session &session, const Options &o);

}  // namespace rftp::client
