#include "middleware/tls/tls_relay.h"

#include <fcntl.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "middleware/tls/tls_error.h"

namespace rftp::middleware::tls {
namespace {

// Plain bytes each way between the engine and OpenSSL.
constexpr std::size_t kChunk = 256 << 10;
// Encrypted bytes each way between OpenSSL and the network: a read or a
// write of the network moves up to this much.
constexpr std::size_t kPairBuffer = 512 << 10;

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// A socket buffer the size of a chunk or two keeps the engine's sendfile
// and splice calls large.
void size_buffers(int fd) {
    int bytes = static_cast<int>(2 * kChunk);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

// The peer's TCP stream ended, or was reset, where TLS said nothing.
bool ended_without_close_notify(int ssl_error) {
    if (ssl_error == SSL_ERROR_SYSCALL) return true;  // the pair reports a bare end of stream so
    return ssl_error == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

// One direction's plain bytes between being read and being written.
struct Pump {
    std::vector<char> buf = std::vector<char>(kChunk);
    std::size_t len = 0, off = 0;
    bool empty() const { return off == len; }
};

}  // namespace

// What one pass of the relay's loop found.
struct TlsRelay::Flow {
    Pump down, up;               // down: network to engine; up: engine to network
    bool network_eof = false;    // the peer's TCP stream ended
    bool tls_ended = false;      // OpenSSL has nothing more to give the engine
    bool engine_ended = false;   // the engine ended its stream
    bool engine_told = false;    // and ours to it is ended too
    bool shutdown_sent = false;  // close_notify is in the pair
    bool close_done = false;     // and on the network, with FIN after it
    bool clean_close = false;    // the peer's close_notify came
    bool moved = false;          // something moved: go round again before waiting
    bool broken = false;         // a failure that ends the relay
    short net_events = 0, eng_events = 0;
};

Result<std::unique_ptr<TlsRelay>> TlsRelay::start(UniqueSsl ssl, UniqueFd network, unsigned timeout_s) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
        return fail(Error::from_errno("TLS relay: socketpair"));
    std::unique_ptr<TlsRelay> r(new TlsRelay);
    r->engine_ = UniqueFd(pair[0]);
    r->relay_end_ = UniqueFd(pair[1]);
    r->wake_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!r->wake_) return fail(Error::from_errno("TLS relay: eventfd"));
    r->kernel_ = kernel_tls_in_use(ssl.get());
    if (auto paired = r->pair_what_the_kernel_does_not_carry(ssl.get()); !paired) return fail(paired.error());
    size_buffers(r->engine_.get());
    const timeval tv{static_cast<time_t>(timeout_s), 0};
    ::setsockopt(r->engine_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(r->engine_.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    size_buffers(r->relay_end_.get());
    set_nonblocking(r->relay_end_.get());
    set_nonblocking(network.get());
    r->ssl_ = std::move(ssl);
    r->network_ = std::move(network);
    try {
        r->thread_ = std::thread([raw = r.get()] { raw->run(); });
    } catch (const std::system_error &e) {
        return fail_msg(std::string("TLS relay: no thread: ") + e.what(), -EAGAIN);
    }
    return r;
}

// The directions the kernel carries keep the socket as their BIO; the
// others move to the pair. The handshake left no bytes of the socket in
// OpenSSL (no read-ahead): whatever follows it is still in the socket, for
// the loop to read.
Status TlsRelay::pair_what_the_kernel_does_not_carry(SSL *ssl) {
    if (kernel_.send && kernel_.receive) return {};
    BIO *inner = nullptr, *outer = nullptr;
    if (BIO_new_bio_pair(&inner, kPairBuffer, &outer, kPairBuffer) != 1) return fail(tls_error("TLS relay: BIO pair"));
    network_bio_.reset(outer);
    if (kernel_.send) {
        SSL_set0_rbio(ssl, inner);
    } else if (kernel_.receive) {
        SSL_set0_wbio(ssl, inner);
    } else {
        SSL_set_bio(ssl, inner, inner);
    }
    return {};
}

TlsRelay::~TlsRelay() {
    stop();
    if (thread_.joinable()) thread_.join();
}

void TlsRelay::stop() {
    stopping_.store(true);
    uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
}

std::string TlsRelay::failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
}

void TlsRelay::fail_with(std::string why) {
    std::lock_guard lock(mutex_);
    if (failure_.empty()) failure_ = std::move(why);
}

void TlsRelay::finish_sending() {
    // The engine is done: its end of stream, then leave to the loop.
    if (finishing_.exchange(true)) return;
    ::shutdown(engine_.get(), SHUT_WR);
    uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
}

Status TlsRelay::finish(int timeout_ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    finish_sending();
    std::unique_lock lock(mutex_);
    const bool done = closed_.wait_until(lock, deadline, [this] {
        return close_sent_ || ended_.load() || peer_closed_cleanly_.load();
    });
    // A peer that ended with close_notify had all it wanted. Once ours went,
    // every byte before it had: a peer that then drops the connection
    // without its own (rftpd does, once the client's came) takes nothing
    // back.
    if (peer_closed_cleanly_.load()) return {};
    if (close_sent_) {
        lock.unlock();
        wait_until_acknowledged(deadline);
        return {};
    }
    if (!failure_.empty()) return fail_msg(failure_, -ECONNRESET);
    return fail_msg(done ? "the TLS data connection ended before all was sent"
                         : "the TLS data connection did not send all within " + std::to_string(timeout_ms / 1000) + " s",
                    done ? -ECONNRESET : -ETIMEDOUT);
}

// close_notify and the FIN are the kernel's now, not yet the peer's.
// Closing the socket while anything from the peer lies unread there (a
// late session ticket) makes the close a reset, which throws away what is
// not yet sent: the peer would read a cut stream. So wait, until the
// deadline, for the peer to acknowledge every byte and the FIN (the
// socket's output queue is empty) or to end its side; the relay goes on
// reading meanwhile.
void TlsRelay::wait_until_acknowledged(std::chrono::steady_clock::time_point deadline) const {
    while (!ended_.load() && !peer_closed_cleanly_.load() && std::chrono::steady_clock::now() < deadline) {
        int unacknowledged = 0;
        if (::ioctl(network_.get(), SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Network bytes into the pair, as far as it has room (none: the engine is
// slower than the peer, and TCP's window tells the peer so).
void TlsRelay::pull_network(Flow &f) {
    if (kernel_.receive) return;  // decrypt() reads the socket itself
    while (!f.network_eof) {
        char *room = nullptr;
        int space = BIO_nwrite0(network_bio_.get(), &room);
        if (space <= 0) return;
        ssize_t n = ::recv(network_.get(), room, static_cast<std::size_t>(space), MSG_DONTWAIT);
        if (n > 0) {
            BIO_nwrite(network_bio_.get(), &room, static_cast<int>(n));
            f.moved = true;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            f.net_events |= POLLIN;
            return;
        }
        // End of stream, or a reset: OpenSSL tells close_notify from a cut.
        f.network_eof = f.moved = true;
        BIO_shutdown_wr(network_bio_.get());
    }
}

// Records from the pair into plain bytes for the engine.
void TlsRelay::decrypt(Flow &f) {
    if (!f.down.empty() || f.tls_ended) return;
    f.down.len = f.down.off = 0;
    while (f.down.len < f.down.buf.size()) {
        ERR_clear_error();
        int n = SSL_read(ssl_.get(), f.down.buf.data() + f.down.len, static_cast<int>(f.down.buf.size() - f.down.len));
        if (n > 0) {
            f.down.len += static_cast<std::size_t>(n);
            f.moved = true;
            continue;
        }
        int err = SSL_get_error(ssl_.get(), n);
        if (err == SSL_ERROR_WANT_READ && kernel_.receive) f.net_events |= POLLIN;
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return;
        f.tls_ended = f.moved = true;
        f.clean_close = err == SSL_ERROR_ZERO_RETURN;
        if (f.clean_close) {
            std::lock_guard lock(mutex_);
            peer_closed_cleanly_.store(true);
            closed_.notify_all();
        }
        if (err != SSL_ERROR_ZERO_RETURN) {
            cut_short_.store(true);
            fail_with(ended_without_close_notify(err) ? "the TLS stream ended without close_notify"
                                                      : openssl_failure("TLS data connection"));
        }
        return;
    }
}

void TlsRelay::feed_engine(Flow &f) {
    const int eng = relay_end_.get();
    while (!f.down.empty()) {
        ssize_t w = ::send(eng, f.down.buf.data() + f.down.off, f.down.len - f.down.off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            f.down.off += static_cast<std::size_t>(w);
            f.moved = true;
        } else if (errno == EAGAIN) {
            f.eng_events |= POLLOUT;
            return;
        } else {
            f.broken = true;  // the engine closed its end: nothing more is wanted
            return;
        }
    }
    if (f.tls_ended && !f.engine_told) {
        ::shutdown(eng, SHUT_WR);
        f.engine_told = f.moved = true;
    }
}

void TlsRelay::take_engine(Flow &f) {
    if (!f.up.empty() || f.engine_ended) return;
    ssize_t r = ::recv(relay_end_.get(), f.up.buf.data(), f.up.buf.size(), MSG_DONTWAIT);
    if (r > 0) {
        f.up.len = static_cast<std::size_t>(r), f.up.off = 0, f.moved = true;
    } else if (r < 0 && errno == EAGAIN) {
        f.eng_events |= POLLIN;
    } else {
        f.engine_ended = f.moved = true;
    }
}

// Plain bytes into records: in the pair, as far as it has room, or on the
// socket, where the kernel makes them.
void TlsRelay::encrypt(Flow &f) {
    if (kernel_.send) return send_to_kernel(f);
    while (!f.up.empty()) {
        ERR_clear_error();
        int n = SSL_write(ssl_.get(), f.up.buf.data() + f.up.off, static_cast<int>(f.up.len - f.up.off));
        if (n > 0) {
            f.up.off += static_cast<std::size_t>(n);
            f.moved = true;
            continue;
        }
        int err = SSL_get_error(ssl_.get(), n);
        if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) return;  // the pair is full
        fail_with(openssl_failure("TLS data connection"));
        f.broken = true;
        return;
    }
}

void TlsRelay::send_to_kernel(Flow &f) {
    while (!f.up.empty()) {
        const std::size_t left = f.up.len - f.up.off;
        ssize_t w = ::send(network_.get(), f.up.buf.data() + f.up.off, left, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            f.up.off += static_cast<std::size_t>(w);
            f.moved = true;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            f.net_events |= POLLOUT;
            return;
        }
        fail_with(std::string("TLS data connection: send: ") + std::strerror(errno));
        f.broken = true;
        return;
    }
}

// Records from the pair to the network (handshake answers and alerts too).
void TlsRelay::push_network(Flow &f) {
    if (kernel_.send) return;  // OpenSSL's own records went to the socket
    for (;;) {
        char *data = nullptr;
        int avail = BIO_nread0(network_bio_.get(), &data);
        if (avail <= 0) return;
        ssize_t w = ::send(network_.get(), data, static_cast<std::size_t>(avail), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            f.net_events |= POLLOUT;
            return;
        }
        if (w < 0) {
            fail_with(std::string("TLS data connection: send: ") + std::strerror(errno));
            f.broken = true;
            return;
        }
        BIO_nread(network_bio_.get(), &data, static_cast<int>(w));
        f.moved = true;
    }
}

// The engine's end of stream, as the peer must see it: close_notify, then
// FIN. Only once finish() said the transfer is good (tls_relay.h).
void TlsRelay::end_to_peer(Flow &f) {
    if (!f.engine_ended || !f.up.empty() || !finishing_.load() || f.close_done) return;
    if (!f.shutdown_sent) {
        ERR_clear_error();
        int r = SSL_shutdown(ssl_.get());
        if (r < 0) {
            // No room for the whole alert in the pair (push, and try again)
            // or, with the kernel sending, in the socket.
            if (SSL_get_error(ssl_.get(), r) == SSL_ERROR_WANT_WRITE) {
                if (kernel_.send) f.net_events |= POLLOUT;
                return;
            }
            // TLS failed before (a bad record, a cut): no close_notify can go.
            fail_with(openssl_failure("close_notify not sent"));
            f.broken = true;
            return;
        }
        f.shutdown_sent = f.moved = true;
        return;  // push_network sends it
    }
    if (!kernel_.send && BIO_ctrl_pending(network_bio_.get()) > 0) return;
    ::shutdown(network_.get(), SHUT_WR);
    f.close_done = f.moved = true;
    std::lock_guard lock(mutex_);
    close_sent_ = true;
    closed_.notify_all();
}

void TlsRelay::run() {
    Flow f;
    while (!stopping_.load() && !f.broken) {
        f.moved = false;
        f.net_events = f.eng_events = 0;
        pull_network(f);
        decrypt(f);
        feed_engine(f);
        take_engine(f);
        encrypt(f);
        end_to_peer(f);
        push_network(f);
        if (f.close_done && f.engine_told) break;
        if (f.moved || f.broken) continue;
        // A socket with nothing to wait for stays out: a reset one would
        // report POLLHUP for ever.
        pollfd fds[3] = {{f.net_events ? network_.get() : -1, f.net_events, 0},
                         {f.eng_events ? relay_end_.get() : -1, f.eng_events, 0},
                         {wake_.get(), POLLIN, 0}};
        if (::poll(fds, 3, -1) < 0 && errno != EINTR) break;
        if (fds[2].revents & POLLIN) {
            uint64_t count;
            (void)!::read(wake_.get(), &count, sizeof count);
        }
    }
    clear_openssl_errors();
    // An end the peer did not announce: the engine must not take it for one.
    if (!f.clean_close) cut_short_.store(true);
    ::shutdown(relay_end_.get(), SHUT_RDWR);
    ::shutdown(network_.get(), SHUT_RDWR);
    std::lock_guard lock(mutex_);
    ended_.store(true);
    closed_.notify_all();
}

std::string tls_path_of(const std::vector<std::unique_ptr<TlsRelay>> &relays) {
    std::string path;
    for (const auto &r : relays) {
        std::string name = r->kernel_tls().name();
        if (!path.empty() && path != name) return "mixed";
        path = std::move(name);
    }
    return path;
}

}  // namespace rftp::middleware::tls
