// What a side does with a framed data connection once its file's end is
// agreed (the EOD frame echoed; docs/protocol.md, "Frames" and "Kept data
// connections").
//
// Without DATAKEEP the client closes each connection first, whichever way
// the file goes, so the TIME_WAIT a closed TCP connection leaves for a
// minute stays on the client. A daemon that closed first kept one on a
// passive port for every file uploaded, and each new passive port's bind
// walks them: at 2000 small files a second (ten thousand of them), bind
// took a third of rftpd's CPU. So the daemon waits for the client's end of
// stream (or its data timeout) before it closes.
//
// Under DATAKEEP neither side ends the connection: the next file's frames
// follow on it.
#pragma once

namespace rftp::middleware {

enum class ConnectionEnd {
    shut_down,         // the client: shutdown(SHUT_WR) at once
    await_peer_close,  // the daemon: wait for the client's end of stream
    keep_open,         // either, under DATAKEEP: nothing
};

void end_connection(int sock, ConnectionEnd how);

}  // namespace rftp::middleware
