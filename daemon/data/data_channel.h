// Where the next transfer's data connections come from: a passive listener
// opened by PASV/EPSV (the default; the client connects), an address given
// by PORT/EPRT (only when active mode is enabled; the server connects), or
// the connections an earlier transfer kept (OPTS DATAKEEP).
// open() blocks and runs on a transfer thread; cancel() may be called from
// the loop to wake it.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/result.h"
#include "common/socket_address.h"
#include "common/unique_fd.h"
#include "protocol/host_port.h"
#include "protocol/token.h"

namespace rftp::daemon {

class DataChannel {
public:
    // Listens on local_addr's address (the control connection's local end)
    // at a port from [port_min, port_max] (0/0: any).
    static Result<std::unique_ptr<DataChannel>> listen_passive(const sockaddr_storage &local_addr,
                                                               uint16_t port_min, uint16_t port_max,
                                                               int backlog);
    static std::unique_ptr<DataChannel> connect_active(const ftp::Endpoint &target);
    // Connections already open and proven: open(n) hands them over when
    // there are exactly n, and fails otherwise (the client counted wrong).
    static std::unique_ptr<DataChannel> kept(std::vector<UniqueFd> connections);

    uint16_t port() const { return port_; }

    // Opens n data connections. Passive: accepts n connections whose source
    // address is the control peer's and, with a token, that show it first
    // (protocol/data_token.h); others are closed and logged. Fails after
    // timeout_s with no progress. Every socket gets SO_RCVTIMEO and
    // SO_SNDTIMEO of timeout_s. Active mode takes no token: rftpd connects.
    Result<std::vector<UniqueFd>> open(int n, const sockaddr_storage &control_peer,
                                       const std::optional<wire::Token> &token, unsigned timeout_s);

    // Wakes a blocked open(); safe from another thread.
    void cancel();

private:
    DataChannel() = default;
    UniqueFd listener_;
    uint16_t port_ = 0;
    std::unique_ptr<ftp::Endpoint> active_target_;
    std::vector<UniqueFd> kept_;
    std::atomic<bool> cancelled_{false};
};

bool same_host(const sockaddr_storage &a, const sockaddr_storage &b);

}  // namespace rftp::daemon
