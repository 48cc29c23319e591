// What a long path asks of TCP. One socket's window grows only to the
// kernel's buffer ceilings (net.ipv4.tcp_rmem, tcp_wmem), so one stream
// moves at most a window per round trip: 3 MiB with Linux's defaults is
// 60 MB/s at 50 ms. Without -P, a file larger than one block takes as
// many streams as cover the control connection's round trip at
// kPathTargetBytesPerSecond, at most kMostStreamsForPath; with a -P that covers less,
// it says so, with what would fill the path (docs/config.md, "Long
// paths: windows").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "client/cli/options.h"
#include "client/session.h"

namespace rftp::client {

inline constexpr uint64_t kPathTargetBytesPerSecond = 1'250'000'000;  // a 10 Gb/s path
// rftpd's default PARALLEL limit. Measured through a 50 ms delay line
// with Linux's default ceilings (docs/benchmarks.md): a 2 GiB get moved
// 0.34 GB/s on 8 streams and 0.48 on 16; each stream costs a thread at
// each end but little memory.
inline constexpr unsigned kMostStreamsForPath = 16;

// The round trip the kernel measured on a TCP socket (TCP_INFO: the least
// seen), in microseconds; 0 when it cannot tell.
uint32_t path_rtt_us(int fd);

// The most one TCP stream keeps in flight: half the receive buffer's
// ceiling (the rest goes to the kernel's own bookkeeping), or three
// quarters of the send buffer's (the rest holds what is not yet sent),
// whichever is less. Measured: with a 4 MiB send ceiling and a 32 MiB
// receive one, one stream at 50 ms carried about 3 MB a round trip.
uint64_t window_ceiling_bytes();

// Streams whose windows cover rtt_us at kPathTargetBytesPerSecond: 1 on a
// short path, at most kMostStreamsForPath and server_max (0: no limit said).
unsigned streams_for_path(uint32_t rtt_us, uint64_t window_bytes, unsigned server_max);

// The TCP streams for `bytes` of a file larger than one block: -P when
// given, else streams_for_path for this session's round trip, so a long
// path is filled without asking (one stream up to 2.5 ms with Linux's
// defaults), and at most one a block. On one CPU, one: each stream is a
// thread at each end, and in the one-CPU lab guest five streams at 10 ms
// moved a third of what one did.
unsigned tcp_streams_for(const Session &session, const Options &o, uint64_t bytes);

// The advice for this session when streams TCP streams cannot fill its
// path; nullopt when they can, or the round trip is unknown. It names the
// sysctls, and -P N when the user's -P is below what the path takes.
std::optional<std::string> long_path_advice(const Session &session, const Options &o, unsigned streams);

}  // namespace rftp::client
