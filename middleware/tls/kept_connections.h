// The data connections a session keeps from one framed transfer to the
// next (OPTS DATAKEEP, docs/protocol.md "Kept data connections"): plain
// sockets in clear, or under PROT P the TLS relays that own theirs, so the
// next transfer needs no connection, no handshake and no slow start.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "common/unique_fd.h"
#include "middleware/tls/tls_relay.h"

namespace rftp::middleware::tls {

struct KeptConnections {
    std::vector<UniqueFd> plain;
    // Their TLS sessions stay up; a relay that is let go closes its
    // connection without close_notify, as a plain one closes.
    std::vector<std::unique_ptr<TlsRelay>> relays;

    std::size_t size() const { return plain.size() + relays.size(); }
    bool empty() const { return size() == 0; }
    void clear() {
        plain.clear();
        relays.clear();
    }
};

}  // namespace rftp::middleware::tls
