// Opens a TCP connection with a deadline: name resolution, then a
// non-blocking connect to each address in turn, waited for with poll, so a
// black-holed host fails after --timeout instead of the kernel's minutes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client/exit_codes.h"
#include "common/unique_fd.h"

namespace rftp::client {

struct Dialed {
    UniqueFd fd;
    std::string peer;  // numeric address actually connected to
};

Outcome<Dialed> tcp_dial(const std::string &host, uint16_t port, int timeout_seconds);

// count connections to one address (the control connection's numeric peer),
// their handshakes under way at once: a transfer's n data connections then
// cost one round trip instead of n. Each is as tcp_dial leaves it. The
// first that fails fails them all, named as "data connection i/n".
Outcome<std::vector<UniqueFd>> tcp_dial_together(const std::string &host, uint16_t port, unsigned count,
                                                 int timeout_seconds);

// SO_RCVTIMEO/SO_SNDTIMEO: a blocking read or write that sees no progress for
// this long fails with EAGAIN, which turns a stalled peer into an error.
void set_io_timeouts(int fd, int timeout_seconds);

}  // namespace rftp::client
