// A misbehaving RDMA peer for the lab's hostile tests. It speaks just enough
// of the channel protocol to reach rftpd after a RADR:
//
//   rdma_peer wrong-token ADDR PORT STREAMS
//       connects with a random token; exit 0 if the server rejected it.
//   rdma_peer malformed ADDR PORT STREAMS BLOCK DEPTH TOKEN
//       connects with the real token, sends a control message with a broken
//       header, and waits for the server's abort; exit 0 if it came.
//
// Exit 1: the server did not behave as it must; 2: usage or local failure.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "middleware/rdma/cm_setup.h"
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

int wrong_token(int argc, char **argv) {
    auto res = ChannelResources::allocate(params_from(argc, argv));
    auto token = new_channel_token();
    if (!res || !token) return 2;
    auto ok = connect_channel(*res, parse_addr(argv[2]), static_cast<uint16_t>(std::stoul(argv[3])), *token, 10);
    if (ok) {
        std::printf("accepted: the server let a wrong token in\n");
        return 1;
    }
    std::printf("refused: %s\n", ok.error().message.c_str());
    return ok.error().code == -ECONNREFUSED ? 0 : 1;
}

int malformed(int argc, char **argv) {
    if (argc < 8) return 2;
    auto token = wire::parse_token_hex(argv[7]);
    auto res = ChannelResources::allocate(params_from(argc, argv));
    if (!token || !res) return 2;
    if (auto ok = connect_channel(*res, parse_addr(argv[2]), static_cast<uint16_t>(std::stoul(argv[3])), *token, 10);
        !ok) {
        std::printf("could not connect: %s\n", ok.error().message.c_str());
        return 1;
    }
    // A credit message whose magic is wrong, sent raw on the control queue pair.
    wire::RdmaMessage m;
    uint8_t *buf = res->control_send_slot(0);
    std::size_t len = wire::encode(m, {buf, kControlSlot});
    buf[0] ^= 0xff;
    ibv_sge sge{reinterpret_cast<uintptr_t>(buf), static_cast<uint32_t>(len), res->messages_mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = make_wr_id(WorkKind::control_send, 0, 0);
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr *bad = nullptr;
    if (ibv_post_send(res->qp(0), &wr, &bad) != 0) return 2;
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
    std::printf("the server never answered the malformed message\n");
    return 1;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc >= 5 && std::strcmp(argv[1], "wrong-token") == 0) return wrong_token(argc, argv);
    if (argc >= 8 && std::strcmp(argv[1], "malformed") == 0) return malformed(argc, argv);
    std::fprintf(stderr,
                 "usage: rdma_peer wrong-token ADDR PORT STREAMS\n"
                 "       rdma_peer malformed ADDR PORT STREAMS BLOCK DEPTH TOKEN\n");
    return 2;
}
