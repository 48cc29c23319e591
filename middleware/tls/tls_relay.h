// A TLS connection seen as a plain socket, so the transfer engine
// (middleware/tcp: splice, sendfile, framed blocks) runs unchanged under TLS.
//
// A thread per data connection moves bytes between the engine's end of a
// socket pair and the TLS connection, both ways, and turns close_notify
// into end of stream and back. Each direction's records are made or read
// by one of two:
// - the kernel (kTLS, kernel_tls.h), where OpenSSL handed it the keys: the
//   relay writes plain bytes to the socket, or reads them from it through
//   OpenSSL, which takes the kernel's alerts as records;
// - OpenSSL, on a BIO pair: the relay reads and writes the network a
//   pair's buffer at a time (up to 512 KiB), where a socket BIO would make
//   two reads and one write per 16 KiB record.
// The engine cannot use a kTLS socket itself: under TLS 1.3 OpenSSL 3.0
// gives the kernel only the sending side, and the engine reads its peer's
// resend requests and end of stream on the same socket.
//
// A TLS stream that ends without close_notify may have been cut by an
// attacker; the engine still sees end of stream, so a receiver must ask
// cut_short() before it trusts an end of stream as the end of a file.
//
// OpenSSL writes to the network with write(2): the process must ignore
// SIGPIPE (rftpd and rftp do), or a peer that went away kills it.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "common/unique_fd.h"
#include "middleware/tls/kernel_tls.h"
#include "middleware/tls/openssl_handles.h"

namespace rftp::middleware::tls {

class TlsRelay {
public:
    // ssl has finished its handshake on network. The relay owns both. The
    // engine's end gets timeout_s as SO_RCVTIMEO/SO_SNDTIMEO: it stalls out
    // as the data connection would have.
    static Result<std::unique_ptr<TlsRelay>> start(UniqueSsl ssl, UniqueFd network, unsigned timeout_s);
    ~TlsRelay();  // stops and joins
    TlsRelay(const TlsRelay &) = delete;
    TlsRelay &operator=(const TlsRelay &) = delete;

    // The engine's end: a stream socket, blocking.
    int engine_fd() const { return engine_.get(); }
    // The transfer is done and good: ends the engine's stream (as if it
    // had shut its side), and waits until every byte it wrote went out on
    // the network, then close_notify, and until the peer acknowledged
    // them (or ended its side), so that closing cannot cut them off.
    // Fails when the relay broke before
    // close_notify went, or timeout_ms passed, unless the peer itself ended
    // with close_notify (it had all it wanted). Call it before the
    // transfer's final reply.
    //
    // Only finish() sends close_notify: an engine that ends its stream by
    // itself (an interrupt shuts its socket down) must not make a cut
    // transfer look complete to the peer.
    Status finish(int timeout_ms);
    // finish()'s first half, which does not wait: a transfer on several
    // connections starts every one's close_notify before it waits on any.
    void finish_sending();
    // Ends the relay at once, without close_notify (an abort); safe from
    // any thread, and from a signal handler.
    void stop();
    // Whether the peer's stream ended without close_notify, or the relay
    // ended early: the engine's end of stream may not be the end the
    // sender meant. Final once the engine saw that end of stream.
    bool cut_short() const { return cut_short_.load(); }
    // Why the relay ended early, if it did.
    std::string failure() const;
    // Which directions the kernel carries (the rest: OpenSSL).
    KernelTls kernel_tls() const { return kernel_; }

private:
    struct Flow;
    TlsRelay() = default;
    Status pair_what_the_kernel_does_not_carry(SSL *ssl);
    void run();
    // One step each of run(): what they moved, or what they wait for, goes in flow.
    void pull_network(Flow &f);
    void decrypt(Flow &f);
    void feed_engine(Flow &f);
    void take_engine(Flow &f);
    void encrypt(Flow &f);
    void send_to_kernel(Flow &f);
    void push_network(Flow &f);
    void end_to_peer(Flow &f);
    void wait_until_acknowledged(std::chrono::steady_clock::time_point deadline) const;
    void fail_with(std::string why);

    UniqueSsl ssl_;
    KernelTls kernel_;
    UniqueBio network_bio_;  // the pair's outer half; the inner one belongs to ssl_
    UniqueFd network_, engine_, relay_end_, wake_;
    std::atomic<bool> cut_short_{false};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> ended_{false};
    std::atomic<bool> finishing_{false};  // finish() was called: close_notify may go
    std::atomic<bool> peer_closed_cleanly_{false};
    mutable std::mutex mutex_;
    std::condition_variable closed_;  // close_notify sent, or the relay ended
    bool close_sent_ = false;         // under mutex_
    std::string failure_;             // under mutex_
    std::thread thread_;
};

// What a transfer's relays have in common: KernelTls::name(), "mixed" when
// they differ, empty for none.
std::string tls_path_of(const std::vector<std::unique_ptr<TlsRelay>> &relays);

}  // namespace rftp::middleware::tls
