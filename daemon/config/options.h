// The daemon's options: one struct, every field with its default and its
// meaning. The YAML schema (config/schema.cpp), the embedded default config
// (conf/rftpd-default.yaml), the example (conf/rftpd.yaml) and docs/config.md
// all follow this struct; keep them in step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "middleware/disk/disk_options.h"

namespace rftp::daemon {

struct ListenAddress {
    std::string address = "127.0.0.1";  // numeric IPv4 or IPv6 address
    uint16_t port = 2121;
    // Implicit FTPS (ftps://, port 990): every connection starts with the
    // TLS handshake. Otherwise TLS begins with AUTH TLS.
    bool implicit_tls = false;
    // A listener on an address other than loopback takes USER only inside
    // TLS, and data only under PROT P, unless this says otherwise in so
    // many words. Loopback listeners always allow clear text.
    bool allow_plaintext = false;
};

// Whether a listener's sessions must use TLS for logins and data.
bool requires_tls(const ListenAddress &listener);

// How a data connection under PROT P shows it belongs to its session.
enum class DataBinding {
    session,  // it resumes the control connection's TLS session (the default)
    address,  // it comes from the control connection's address (clients that cannot resume)
};

// FTPS (RFC 4217): the certificate and who must use it. TLS is offered when
// a certificate is set.
struct TlsOptions {
    std::string certificate;   // PEM: the certificate, then its chain
    std::string key;           // PEM: its private key
    std::string min_version = "1.2";  // "1.2" or "1.3"; 1.3 is preferred when both sides have it
    DataBinding data_binding = DataBinding::session;
    bool enabled() const { return !certificate.empty(); }
};

enum class Access { read_only, read_write };

struct UserAccount {
    std::string name;
    std::string password_hash;  // "$scrypt$..." from `rftpd --hash-password`; never a plain password
    std::string root;           // absolute directory; the user sees it as "/"
    Access access = Access::read_only;
};

// The RDMA channel (docs/middleware.md): what RADR may ask for, and how much
// memory all channels together may pin.
struct RdmaOptions {
    bool enabled = true;                 // offer RDMA (FEAT) when this machine has an RDMA device; RADR on an address none serves gets 425
    unsigned max_streams = 8;            // data queue pairs per channel
    uint32_t max_block_size = 8u << 20;  // largest block (and RDMA WRITE) a client may ask for
    unsigned max_iodepth = 32;           // RDMA WRITEs in flight per queue pair
    uint64_t pool_size = 64ull << 20;    // registered block pool per channel; size it to bandwidth x round trip
    uint64_t max_pinned = 1ull << 30;    // all channels together; RADR beyond it gets 450 and clients use TCP
    uint16_t port_min = 0;               // rdma_cm listen ports for RADR; 0/0: any
    uint16_t port_max = 0;
    // Completion worker threads per channel; unset ("auto"): 2, or none on a
    // one-CPU host (middleware::rdma::default_workers()).
    std::optional<unsigned> workers;
    bool sequential_writes = false;      // RSTR writes blocks in file order (media that need it)
    // RADR only inside TLS: the channel's token is then never seen in clear
    // and is bound to the TLS session. (RDMA data itself is never encrypted.)
    bool require_tls = false;
};

struct DaemonOptions {
    // Control-channel listeners. The embedded default listens on loopback only.
    std::vector<ListenAddress> listen{ListenAddress{}};

    // Passive data ports come from [passive_port_min, passive_port_max];
    // 0/0 lets the kernel choose any free port.
    uint16_t passive_port_min = 0;
    uint16_t passive_port_max = 0;
    // Address announced in 227 replies (behind NAT); empty: the control
    // connection's own local address.
    std::string passive_address;
    // PORT/EPRT. Off by default: firewall friendly, and no FTP bounce.
    bool active_mode = false;

    unsigned max_sessions = 64;          // concurrent control connections, all users
    unsigned max_sessions_per_ip = 16;   // concurrent control connections from one address
    unsigned login_timeout_s = 30;       // to complete USER/PASS after connecting
    unsigned idle_timeout_s = 300;       // no command for this long ends the session
    unsigned data_timeout_s = 60;        // a data connection that moves nothing for this long fails
    unsigned max_login_failures = 3;     // wrong passwords before the session is closed
    // After a wrong password, later logins from the same address (IPv6: /64)
    // wait their turn before their check, spaced by this delay, doubled at
    // each further failure up to the most (daemon/auth/login_throttle.h).
    unsigned failed_login_delay_s = 1;   // 0: no such delay
    unsigned failed_login_max_delay_s = 30;

    unsigned max_streams = 16;           // parallel data connections per transfer
    uint32_t max_block_size = 64u << 20; // largest parallel-stream block, bytes

    // Durability of uploads: fdatasync the partial file before it is renamed
    // into place, so a file under its final name survives a power cut.
    bool sync_before_rename = true;
    // Reserve the whole file's blocks (fallocate) when its size is known up
    // front (RDMA uploads): less fragmentation, and a full disk is found at
    // the start rather than gigabytes in.
    bool preallocate = true;
    // How RDMA transfers read and write files (storage.direct_io, .readers,
    // .writers, .queue_depth): O_DIRECT through io_uring, with its defaults.
    middleware::disk::DiskOptions disk;

    RdmaOptions rdma;
    TlsOptions tls;

    bool anonymous_enabled = false;      // "anonymous"/"ftp" login, always read-only
    std::string anonymous_root;          // required when anonymous_enabled

    std::vector<UserAccount> users;

    std::string banner = "rftpd ready.";
    std::string log_level = "info";      // error, warning, notice, info, debug
};

}  // namespace rftp::daemon
