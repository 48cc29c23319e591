#include "daemon/config/options.h"

#include "common/socket_address.h"

namespace rftp::daemon {

bool requires_tls(const ListenAddress &listener) {
    return listener.implicit_tls || (!listener.allow_plaintext && !is_loopback_address(listener.address));
}

}  // namespace rftp::daemon
