// A misbehaving RDMA peer for the lab's hostile tests. It speaks just enough
// of the channel protocol to reach rftpd after a RADR:
//
//   rdma_peer wrong-token ADDR PORT STREAMS
//       connects with a random token; exit 0 if the server rejected it.
//   rdma_peer malformed ADDR PORT STREAMS BLOCK DEPTH TOKEN
//       connects with the real token, sends a control message with a broken
//       header, and waits for the server's abort; exit 0 if it came.
//   rdma_peer half-block-ahead ADDR PORT STREAMS BLOCK DEPTH TOKEN
//       the same with a well-formed grant_ahead for the server's first file
//       whose block is half a block long: not a whole block, out of line.
//   rdma_peer grant-flood ADDR PORT STREAMS BLOCK DEPTH TOKEN
//       connects with the real token and, once the server (sending, after
//       RRTR) announces its file, grants every block of it and then every
//       block again, all into one buffer: each grant valid on its own, the
//       lot more than any sink holds or resends. Exit 0 if the server
//       aborted the channel before the grants ran out.
//   rdma_peer replayed-notice ADDR PORT STREAMS BLOCK DEPTH TOKEN SIZE
//       connects with the real token and, as the source of an RSTR, sends a
//       file of SIZE bytes (every byte of block k is k + 1), each block as
//       WRITE then block_done. When a slot it filled before is granted
//       again, it first sends that slot's notice again without writing (a
//       replayed notice: the slot still holds its last block, under a
//       trailer that matched it), and writes the block only when the slot
//       is granted again. Prints what the server did; exit 0 once the
//       server finished the file (the caller checks what the file holds).
//
// Exit 1: the server did not behave as it must; 2: usage or local failure.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "middleware/integrity/block_checksum.h"
#include "middleware/random_token.h"
#include "middleware/rdma/cm_setup.h"
#include "middleware/rdma/control_credits.h"
#include "middleware/rdma/device_check.h"
#include "middleware/rdma/work_ids.h"
#include "protocol/rdma_message.h"

using namespace rftp;
using namespace rftp::middleware::rdma;

namespace {

sockaddr_storage parse_addr(const char *text) {
    sockaddr_storage s{};
    auto *in = reinterpret_cast<sockaddr_in *>(&s);
    in->sin_family = AF_INET;
    if (::inet_pton(AF_INET, text, &in->sin_addr) != 1) {
        std::fprintf(stderr, "rdma_peer: %s is not an IPv4 address\n", text);
        std::exit(2);
    }
    return s;
}

ChannelParams params_from(int argc, char **argv) {
    ChannelParams p;
    p.streams = static_cast<unsigned>(std::stoul(argv[4]));
    if (argc > 6) {
        p.block_size = static_cast<uint32_t>(std::stoul(argv[5]));
        p.iodepth = static_cast<unsigned>(std::stoul(argv[6]));
    }
    p.blocks = 4;
    return p;
}

// Posts the first len bytes of control send slot 0 as one signalled SEND.
bool post_control_send(ChannelResources &res, std::size_t len) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(res.control_send_slot(0)), static_cast<uint32_t>(len),
                res.messages_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(WorkKind::control_send, 0, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    return ibv_post_send(res.qp(0), &wr, &bad) == 0;
}

// Connects every queue pair to ADDR PORT (argv[2], argv[3]) with the token.
bool connect_to_server(ChannelResources &res, char **argv, const wire::ChannelToken &token) {
    auto ok = connect_channel(res, parse_addr(argv[2]), static_cast<uint16_t>(std::stoul(argv[3])), token, 10);
    if (!ok) std::printf("could not connect: %s\n", ok.error().message.c_str());
    return static_cast<bool>(ok);
}

// wrong-token ADDR PORT STREAMS [TOKEN]: a random token, or the one given
// (the RADR reply's token on a TLS session, which the channel must not take).
int wrong_token(int argc, char **argv) {
    auto res = ChannelResources::allocate(params_from(argc, argv));
    auto token = argc >= 6 ? wire::parse_token_hex(argv[5]) : middleware::new_random_token();
    if (!res || !token) return 2;
    auto ok = connect_channel(*res, parse_addr(argv[2]), static_cast<uint16_t>(std::stoul(argv[3])), *token, 10);
    if (ok) {
        std::printf("accepted: the server let a wrong token in\n");
        return 1;
    }
    std::printf("refused: %s\n", ok.error().message.c_str());
    return ok.error().code == -ECONNREFUSED ? 0 : 1;
}

// Connects, sends what make_message writes into the first control send
// slot (returning its length), and waits for the server's abort: exit 0
// if it came.
template <class MakeMessage>
int send_and_expect_abort(int argc, char **argv, MakeMessage make_message) {
    if (argc < 8) return 2;
    auto token = wire::parse_token_hex(argv[7]);
    auto res = ChannelResources::allocate(params_from(argc, argv));
    if (!token || !res) return 2;
    if (!connect_to_server(*res, argv, *token)) return 1;
    const std::size_t len = make_message(*res, res->control_send_slot(0));
    if (!post_control_send(*res, len)) return 2;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (std::chrono::steady_clock::now() < deadline) {
        ibv_wc wc;
        int n = ibv_poll_cq(res->cq.get(), 1, &wc);
        if (n < 0) return 2;
        if (n == 0) {
            ::poll(nullptr, 0, 5);
            continue;
        }
        if (wr_kind(wc.wr_id) != WorkKind::control_recv) continue;
        if (wc.status != IBV_WC_SUCCESS) {
            std::printf("control queue pair failed: %s\n", ibv_wc_status_str(wc.status));
            return 1;
        }
        auto reply = wire::decode({res->control_recv_slot(wr_index(wc.wr_id)), wc.byte_len});
        if (reply && reply->type == wire::RdmaMessageType::abort) {
            std::printf("aborted by the server: %s\n", reply->text.c_str());
            return 0;
        }
        std::printf("unexpected reply from the server\n");
        return 1;
    }
    std::printf("the server never answered the message\n");
    return 1;
}

int malformed(int argc, char **argv) {
    // A credit message whose magic is wrong, sent raw on the control queue pair.
    return send_and_expect_abort(argc, argv, [](ChannelResources &, uint8_t *buf) {
        std::size_t len = wire::encode(wire::RdmaMessage{}, {buf, kControlSlot});
        buf[0] ^= 0xff;
        return len;
    });
}

int half_block_ahead(int argc, char **argv) {
    // Well formed, and a grant of this peer's memory, but half a block.
    return send_and_expect_abort(argc, argv, [](ChannelResources &res, uint8_t *buf) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::grant_ahead;
        m.file_id = 1;
        m.grant_count = 1;
        m.grants[0] = wire::Grant{0, res.params.block_size / 2, 0, reinterpret_cast<uintptr_t>(res.block(0)),
                                  res.pool_mr->rkey};
        return wire::encode(m, {buf, kControlSlot});
    });
}

// The control queue pair as a well-behaved peer drives it: receives
// re-posted and their credits returned, sends only on credit, one at a time.
// Data receives are re-posted too, so the server's notices never stall.
class ControlPeer {
public:
    explicit ControlPeer(ChannelResources &res) : res_(res) {}

    // Next control message, or nullopt after seconds.
    std::optional<wire::RdmaMessage> receive(int seconds) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
        while (std::chrono::steady_clock::now() < deadline) {
            if (!inbox_.empty()) {
                auto m = inbox_.front();
                inbox_.erase(inbox_.begin());
                return m;
            }
            if (!poll_once()) return std::nullopt;
        }
        return std::nullopt;
    }

    // Sends m and waits until it was delivered; false when the channel broke.
    bool send(wire::RdmaMessage m) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (!credits_.may_send(false)) {
            if (std::chrono::steady_clock::now() > deadline || !poll_once()) return false;
        }
        m.credits = credits_.on_send();
        uint8_t *buf = res_.control_send_slot(0);
        std::size_t len = wire::encode(m, {buf, kControlSlot});
        if (!post_control_send(res_, len)) return false;
        sent_ = false;
        while (!sent_) {
            if (std::chrono::steady_clock::now() > deadline || !poll_once()) return false;
        }
        return true;
    }

    // Waits until a block_done notice this peer posted has gone (with the
    // WRITE before it: one queue pair completes in order), so its memory may
    // be used again; false when the channel broke.
    bool notice_sent() {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (notices_done_ == 0) {
            if (std::chrono::steady_clock::now() > deadline || !poll_once()) return false;
        }
        --notices_done_;
        return true;
    }

private:
    // One pass over the completion queue; false when a work request failed.
    bool poll_once() {
        ibv_wc wc;
        int n = ibv_poll_cq(res_.cq.get(), 1, &wc);
        if (n < 0) return false;
        if (n == 0) {
            ::poll(nullptr, 0, 1);
            return true;
        }
        if (wc.status != IBV_WC_SUCCESS) {
            std::printf("work request failed: %s\n", ibv_wc_status_str(wc.status));
            return false;
        }
        switch (wr_kind(wc.wr_id)) {
            case WorkKind::control_send: sent_ = true; break;
            case WorkKind::control_recv: {
                uint32_t slot = wr_index(wc.wr_id);
                auto m = wire::decode({res_.control_recv_slot(slot), wc.byte_len});
                if (!res_.post_control_recv(slot)) return false;
                credits_.on_reposted();
                if (!m) return false;
                if (!credits_.on_returned(m->credits)) return false;
                inbox_.push_back(*m);
                break;
            }
            case WorkKind::data_recv:
                if (!res_.post_data_recv(wr_qp(wc.wr_id), wr_index(wc.wr_id))) return false;
                break;
            case WorkKind::notice: ++notices_done_; break;
            default: break;
        }
        return true;
    }

    ChannelResources &res_;
    ControlCredits credits_{kControlDepth};
    std::vector<wire::RdmaMessage> inbox_;
    bool sent_ = false;
    unsigned notices_done_ = 0;
};

// A notice for every grant may come before this peer re-posts a receive,
// and iWARP has no receiver-not-ready retry: receives for all of them.
constexpr unsigned kFloodReceives = 2304;

int grant_flood(int argc, char **argv) {
    if (argc < 8) return 2;
    auto token = wire::parse_token_hex(argv[7]);
    ChannelParams params = params_from(argc, argv);
    params.blocks = kFloodReceives;
    auto res = ChannelResources::allocate(params);
    if (!token || !res) return 2;
    if (!connect_to_server(*res, argv, *token)) return 1;
    std::printf("connected\n");
    std::fflush(stdout);
    ControlPeer peer(*res);
    auto begin = peer.receive(30);
    if (!begin || begin->type != wire::RdmaMessageType::file_begin) {
        std::printf("no file_begin from the server\n");
        return 1;
    }
    const uint64_t block = res->params.block_size;
    const uint64_t blocks = (begin->size - begin->start + block - 1) / block;
    if (2 * blocks > kFloodReceives) {
        std::printf("a file of %llu blocks is too large for this peer\n", static_cast<unsigned long long>(blocks));
        return 2;
    }
    auto grant = [&](uint64_t k, uint32_t slot) {
        uint64_t offset = begin->start + k * block;
        wire::Grant g;
        g.slot = slot;
        g.offset = offset;
        g.length = static_cast<uint32_t>(std::min<uint64_t>(block, begin->size - offset));
        g.addr = reinterpret_cast<uintptr_t>(res->block(0));
        g.rkey = res->pool_mr->rkey;
        return g;
    };
    // Every block once, then every block again: 2 x blocks grants in all.
    uint64_t sent = 0;
    for (uint64_t k = 0; k < 2 * blocks;) {
        wire::RdmaMessage m;
        m.type = wire::RdmaMessageType::grant;
        m.file_id = begin->file_id;
        while (m.grant_count < wire::kMaxGrantsPerMessage && k < 2 * blocks) {
            m.grants[m.grant_count] = grant(k % blocks, m.grant_count);
            ++m.grant_count;
            ++k;
        }
        if (!peer.send(m)) break;  // the server closed the channel
        sent += m.grant_count;
    }
    for (;;) {
        auto m = peer.receive(15);
        if (!m) break;
        if (m->type == wire::RdmaMessageType::abort) {
            std::printf("aborted by the server after %llu grants: %s\n", static_cast<unsigned long long>(sent),
                        m->text.c_str());
            return 0;
        }
    }
    std::printf("the server took %llu grants for %llu blocks without aborting\n",
                static_cast<unsigned long long>(sent), static_cast<unsigned long long>(blocks));
    return 1;
}

// WRITE of block k's bytes (and their trailer) into the granted memory, then
// its block_done notice, on the first data queue pair: in order, as a
// source that cannot send immediates does it.
bool write_block(ChannelResources &res, const wire::Grant &g, uint32_t file_id, uint8_t fill, bool write) {
    uint8_t *data = res.block(0);
    std::memset(data, fill, g.length);
    middleware::put_block_trailer(data, g.length, middleware::crc32c({data, g.length}));
    wire::RdmaMessage m;
    m.type = wire::RdmaMessageType::block_done;
    m.file_id = file_id;
    m.slot = g.slot;
    m.length = g.length;
    uint8_t *buf = res.notice_slot(0);
    std::size_t len = wire::encode(m, {buf, kNoticeSlot});
    ibv_sge sges[2] = {{reinterpret_cast<uintptr_t>(data), g.length + static_cast<uint32_t>(middleware::kBlockTrailerBytes),
                        res.pool_mr->lkey},
                       {reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), res.messages_mr->lkey}};
    ibv_send_wr wrs[2] = {};
    wrs[0].wr_id = make_wr_id(WorkKind::write, 1, 0);
    wrs[0].sg_list = &sges[0];
    wrs[0].num_sge = 1;
    wrs[0].opcode = IBV_WR_RDMA_WRITE;
    wrs[0].wr.rdma.remote_addr = g.addr;
    wrs[0].wr.rdma.rkey = g.rkey;
    wrs[0].next = &wrs[1];
    wrs[1].wr_id = make_wr_id(WorkKind::notice, 1, 0);
    wrs[1].sg_list = &sges[1];
    wrs[1].num_sge = 1;
    wrs[1].opcode = IBV_WR_SEND;
    wrs[1].send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    return ibv_post_send(res.qp(1), write ? &wrs[0] : &wrs[1], &bad) == 0;
}

int replayed_notice(int argc, char **argv) {
    if (argc < 9) return 2;
    auto token = wire::parse_token_hex(argv[7]);
    const uint64_t size = std::stoull(argv[8]);
    auto res = ChannelResources::allocate(params_from(argc, argv));
    if (!token || !res) return 2;
    if (!connect_to_server(*res, argv, *token)) return 1;
    std::printf("connected\n");
    std::fflush(stdout);
    ControlPeer peer(*res);
    wire::RdmaMessage begin;
    begin.type = wire::RdmaMessageType::file_begin;
    begin.file_id = 7;
    begin.start = 0;
    begin.size = size;
    if (!peer.send(begin)) return 1;
    const uint64_t block = res->params.block_size;
    std::vector<bool> filled_before;  // by slot
    bool replayed = false;
    for (;;) {
        auto m = peer.receive(30);
        if (!m) {
            std::printf("the server went quiet\n");
            return 1;
        }
        if (m->type == wire::RdmaMessageType::abort) {
            std::printf("aborted by the server: %s\n", m->text.c_str());
            return 1;
        }
        if (m->type == wire::RdmaMessageType::file_done) {
            std::printf("file_done: %llu bytes%s\n", static_cast<unsigned long long>(m->bytes),
                        replayed ? ", after the replayed notice" : "");
            return replayed ? 0 : 1;
        }
        if (m->type != wire::RdmaMessageType::grant) continue;
        for (unsigned i = 0; i < m->grant_count; ++i) {
            const wire::Grant &g = m->grants[i];
            if (g.slot >= filled_before.size()) filled_before.resize(g.slot + 1);
            const bool replay = filled_before[g.slot] && !replayed;
            std::printf("grant: slot %u at %llu%s\n", g.slot, static_cast<unsigned long long>(g.offset),
                        replay ? ": replaying its last notice" : "");
            std::fflush(stdout);
            if (!write_block(*res, g, begin.file_id, static_cast<uint8_t>(g.offset / block + 1), !replay)) return 2;
            if (!peer.notice_sent()) return 1;
            replayed = replayed || replay;
            filled_before[g.slot] = true;
        }
    }
}

}  // namespace

int main(int argc, char **argv) {
    if (argc >= 5 && std::strcmp(argv[1], "wrong-token") == 0) return wrong_token(argc, argv);
    if (argc >= 8 && std::strcmp(argv[1], "malformed") == 0) return malformed(argc, argv);
    if (argc >= 8 && std::strcmp(argv[1], "half-block-ahead") == 0) return half_block_ahead(argc, argv);
    if (argc >= 8 && std::strcmp(argv[1], "grant-flood") == 0) return grant_flood(argc, argv);
    if (argc >= 9 && std::strcmp(argv[1], "replayed-notice") == 0) return replayed_notice(argc, argv);
    std::fprintf(stderr,
                 "usage: rdma_peer wrong-token ADDR PORT STREAMS\n"
                 "       rdma_peer malformed ADDR PORT STREAMS BLOCK DEPTH TOKEN\n"
                 "       rdma_peer half-block-ahead ADDR PORT STREAMS BLOCK DEPTH TOKEN\n"
                 "       rdma_peer grant-flood ADDR PORT STREAMS BLOCK DEPTH TOKEN\n"
                 "       rdma_peer replayed-notice ADDR PORT STREAMS BLOCK DEPTH TOKEN SIZE\n");
    return 2;
}
