#include "middleware/tcp/connection_end.h"

#include <sys/socket.h>

#include "middleware/tcp/socket_io.h"

namespace rftp::middleware {

void end_connection(int sock, ConnectionEnd how) {
    switch (how) {
        case ConnectionEnd::shut_down:
            ::shutdown(sock, SHUT_WR);
            return;
        case ConnectionEnd::await_peer_close:
            await_peer_close(sock);
            return;
        case ConnectionEnd::keep_open:
            return;
    }
}

}  // namespace rftp::middleware
