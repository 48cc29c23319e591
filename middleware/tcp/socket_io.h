// Blocking socket and splice helpers shared by the stream and parallel paths.
// Every call retries EINTR and turns a timeout (SO_RCVTIMEO/SO_SNDTIMEO gives
// EAGAIN) into a "stalled" error, so a dead peer never hangs a thread forever.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/result.h"
#include "common/unique_fd.h"
#include "middleware/transfer_progress.h"

namespace rftp::middleware {

// A pipe sized for splicing, kept for the whole transfer of one thread.
class SplicePipe {
public:
    static Result<SplicePipe> create();
    int read_end() const { return read_.get(); }
    int write_end() const { return write_.get(); }
    std::size_t capacity() const { return capacity_; }

private:
    UniqueFd read_, write_;
    std::size_t capacity_ = 65536;
};

Status write_all(int sock, const void *data, std::size_t len);

// Whatever one recv brings, up to len bytes (0: end of stream); an abort
// or a stalled connection (the socket's receive timeout) is an error.
Result<std::size_t> recv_some(int sock, void *buf, std::size_t len, const TransferProgress &progress);

// Reads up to len bytes, stopping early only at end of stream. Returns the count.
Result<std::size_t> read_full(int sock, void *buf, std::size_t len);

// Fills buf from sock until it is full, the stream ends (ended), the stream
// idles for idle_ms with something in hand, or an error comes; what arrived
// before an error still counts (filled).
Status fill_from_socket(int sock, uint8_t *buf, std::size_t len, int idle_ms, std::size_t &filled, bool &ended);

// Sends exactly count bytes of file_fd from offset with sendfile(2), or with
// pread + send where the source refuses sendfile.
Status copy_file_to_socket(int sock, int file_fd, uint64_t offset, uint64_t count, TransferProgress &progress);

// The same for a framed block's payload: progress.bytes is left to the
// caller, since a block sent again counts once.
Status copy_block_to_socket(int sock, int file_fd, uint64_t offset, uint64_t count, const TransferProgress &progress);

// Writes len bytes at offset (or at the current position when not seekable).
Status write_to_file(int fd, bool seekable, uint64_t offset, const char *data, std::size_t len);

// True for fds whose data can be addressed by offset (regular files, block devices, /dev/null).
bool is_seekable(int fd);

// TCP_CORK on/off; a no-op on sockets that are not TCP.
void set_cork(int sock, bool on);

// Waits for the peer's end of stream, so that the close which follows is
// the passive one: TCP's TIME_WAIT then stays with the peer. Gives up at the
// socket's receive timeout, or at once when the peer sends anything more
// (nothing may follow the end of a transfer, and a peer must not be able to
// hold this side by sending).
void await_peer_close(int sock);

}  // namespace rftp::middleware
