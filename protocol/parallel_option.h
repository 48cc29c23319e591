// OPTS PARALLEL (docs/protocol.md, "Parallel streams"): the client asks
// for n framed data connections and a largest block; the server answers
// with the values in force. "OPTS PARALLEL 0" returns to plain streams.
//
//     OPTS PARALLEL <n> [<block>]  ->  200 PARALLEL <n'> <block'>
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rftp::ftp {

struct ParallelRequest {
    uint64_t streams = 0;                 // 0: plain stream mode; a large count is capped, not refused
    std::optional<uint64_t> block_size;   // absent: the session's block size stays

    bool operator==(const ParallelRequest &) const = default;
};

struct ParallelGrant {
    unsigned streams = 0;
    uint64_t block_size = 0;

    bool operator==(const ParallelGrant &) const = default;
};

// The OPTS argument, "PARALLEL <n> [<block>]".
std::string format_parallel_request(const ParallelRequest &r);
// args: what follows "PARALLEL": one or two decimal numbers (any words
// after them are ignored).
std::optional<ParallelRequest> parse_parallel_request(std::string_view args);

// The 200 reply's text, "PARALLEL <n'> <block'>".
std::string format_parallel_grant(const ParallelGrant &g);
// None unless both numbers are there and above 0.
std::optional<ParallelGrant> parse_parallel_grant(std::string_view text);

}  // namespace rftp::ftp
