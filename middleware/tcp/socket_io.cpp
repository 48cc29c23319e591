#include "middleware/tcp/socket_io.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "common/wait_ready.h"

namespace rftp::middleware {
namespace {

constexpr std::size_t kWantedPipeSize = 1u << 20;
constexpr std::size_t kBounceBuffer = 256u << 10;

Error io_error(const char *what, int err) {
    if (err == EAGAIN || err == EWOULDBLOCK) return Error{-ETIMEDOUT, std::string(what) + ": data connection stalled (timeout)"};
    return Error::from_errno(what, err);
}

Status check_abort(const TransferProgress &progress) {
    if (progress.abort.load(std::memory_order_relaxed)) return fail(Error{-ECANCELED, "transfer aborted"});
    return {};
}

}  // namespace

Status write_to_file(int fd, bool seekable, uint64_t offset, const char *data, std::size_t len) {
    while (len > 0) {
        ssize_t n = seekable ? ::pwrite(fd, data, len, static_cast<off_t>(offset)) : ::write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                wait_ready(fd, false);
                continue;
            }
            return fail_errno("write to file");
        }
        data += n;
        len -= static_cast<std::size_t>(n);
        offset += static_cast<uint64_t>(n);
    }
    return {};
}

Result<SplicePipe> SplicePipe::create() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return fail_errno("pipe2");
    SplicePipe p;
    p.read_.reset(fds[0]);
    p.write_.reset(fds[1]);
    // A bigger pipe means fewer splice calls; unprivileged users may be capped
    // by /proc/sys/fs/pipe-max-size, so take what we get.
    int got = ::fcntl(fds[1], F_SETPIPE_SZ, static_cast<int>(kWantedPipeSize));
    if (got < 0) got = ::fcntl(fds[1], F_GETPIPE_SZ);
    if (got > 0) p.capacity_ = static_cast<std::size_t>(got);
    return p;
}

Status write_all(int sock, const void *data, std::size_t len) {
    const char *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::send(sock, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(io_error("send", errno));
        }
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return {};
}

Result<std::size_t> recv_some(int sock, void *buf, std::size_t len, const TransferProgress &progress) {
    for (;;) {
        if (auto s = check_abort(progress); !s) return fail(s.error());
        ssize_t n = ::recv(sock, buf, len, 0);
        if (n >= 0) return static_cast<std::size_t>(n);
        if (errno != EINTR) return fail(io_error("recv", errno));
    }
}

Result<std::size_t> read_full(int sock, void *buf, std::size_t len) {
    char *p = static_cast<char *>(buf);
    std::size_t done = 0;
    while (done < len) {
        ssize_t n = ::recv(sock, p + done, len - done, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(io_error("recv", errno));
        }
        if (n == 0) break;
        done += static_cast<std::size_t>(n);
    }
    return done;
}

Status fill_from_socket(int sock, uint8_t *buf, std::size_t len, int idle_ms, std::size_t &filled, bool &ended) {
    filled = 0;
    ended = false;
    while (filled < len) {
        if (filled > 0) {
            pollfd p{sock, POLLIN, 0};
            int ready = ::poll(&p, 1, idle_ms);
            if (ready == 0) return {};
            if (ready < 0 && errno != EINTR) return fail_errno("poll data connection");
        }
        ssize_t n = ::recv(sock, buf + filled, len - filled, 0);
        if (n > 0) {
            filled += static_cast<std::size_t>(n);
        } else if (n == 0) {
            ended = true;
            return {};
        } else if (errno != EINTR) {
            return fail(io_error("recv", errno));
        }
    }
    return {};
}

bool is_seekable(int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return false;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) return true;
    return S_ISCHR(st.st_mode) && ::lseek(fd, 0, SEEK_CUR) >= 0;
}

void await_peer_close(int sock) {
    uint8_t byte;
    ssize_t n;
    do n = ::recv(sock, &byte, 1, 0);
    while (n < 0 && errno == EINTR);
}

void set_cork(int sock, bool on) {
    int v = on ? 1 : 0;
    (void)::setsockopt(sock, IPPROTO_TCP, TCP_CORK, &v, sizeof v);
}

namespace {

// moved: where the bytes sent are counted, or null.
Status file_to_socket(int sock, int fd, uint64_t offset, uint64_t count, const TransferProgress &progress,
                      std::atomic<uint64_t> *moved) {
    bool first = true;
    while (count > 0) {
        if (auto s = check_abort(progress); !s) return s;
        off_t off = static_cast<off_t>(offset);
        std::size_t want = static_cast<std::size_t>(std::min<uint64_t>(count, 1u << 30));
        ssize_t n = ::sendfile(sock, fd, &off, want);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (first && (errno == EINVAL || errno == ENOSYS)) break;  // fall back below
            return fail(io_error("sendfile", errno));
        }
        if (n == 0) return fail(file_ended_early(offset));
        first = false;
        offset += static_cast<uint64_t>(n);
        count -= static_cast<uint64_t>(n);
        if (moved) moved->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
    if (count == 0) return {};
    std::vector<char> buf(std::min<uint64_t>(count, kBounceBuffer));
    while (count > 0) {
        if (auto s = check_abort(progress); !s) return s;
        ssize_t n = ::pread(fd, buf.data(), std::min<uint64_t>(count, buf.size()), static_cast<off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail_errno("read from file");
        }
        if (n == 0) return fail(file_ended_early(offset));
        if (auto s = write_all(sock, buf.data(), static_cast<std::size_t>(n)); !s) return s;
        offset += static_cast<uint64_t>(n);
        count -= static_cast<uint64_t>(n);
        if (moved) moved->fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    }
    return {};
}

}  // namespace

Status copy_file_to_socket(int sock, int fd, uint64_t offset, uint64_t count, TransferProgress &progress) {
    return file_to_socket(sock, fd, offset, count, progress, &progress.bytes);
}

Status copy_block_to_socket(int sock, int fd, uint64_t offset, uint64_t count, const TransferProgress &progress) {
    return file_to_socket(sock, fd, offset, count, progress, nullptr);
}

}  // namespace rftp::middleware
