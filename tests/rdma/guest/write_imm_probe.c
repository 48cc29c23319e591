/* Does this RDMA device deliver RDMA WRITE WITH IMMEDIATE?
 *
 *   write_imm_probe ADDR PORT
 *
 * The engine notifies the sink of a filled block with WRITE_WITH_IMM where the
 * device supports it, and with WRITE + SEND where it does not (iWARP has no
 * immediate data). This probe answers the question by trying it, not by
 * guessing from the driver's name: it forks a receiver, connects to it over
 * rdma_cm on the device that owns ADDR, writes a 64 KiB pattern with an
 * immediate, and the receiver checks the completion (opcode, immediate,
 * length) and the data.
 *
 * Exit: 0 = supported and verified; 3 = the device refused to post the work
 * request (not supported); 1 = anything else went wrong (a real failure).
 * Build: gcc -O2 -Wall -o write_imm_probe write_imm_probe.c -lrdmacm -libverbs
 */
#include <arpa/inet.h>
#include <errno.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { LEN = 64 * 1024, TIMEOUT_S = 20, REFUSED = 3 };
static const uint32_t IMM = 0x5eed1234u;

/* What the receiver tells the writer in the connection's private data. */
struct grant { uint64_t addr; uint32_t rkey; } __attribute__((packed));

static int fail(const char *who, const char *what)
{
    fprintf(stderr, "write_imm_probe %s: %s: %s\n", who, what, strerror(errno));
    return 1;
}

static struct rdma_addrinfo *resolve(const char *addr, const char *port, int passive)
{
    struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
    struct rdma_addrinfo *res = NULL;
    if (passive) hints.ai_flags = RAI_PASSIVE;
    return rdma_getaddrinfo(addr, port, &hints, &res) ? NULL : res;
}

static struct ibv_qp_init_attr qp_attr(void)
{
    struct ibv_qp_init_attr attr = { .sq_sig_all = 1 };
    attr.cap.max_send_wr = attr.cap.max_recv_wr = 4;
    attr.cap.max_send_sge = attr.cap.max_recv_sge = 1;
    return attr;
}

/* Child: accept one connection, grant a buffer, wait for the write. */
static int receiver(const char *addr, const char *port, int ready_fd)
{
    struct rdma_addrinfo *res = resolve(addr, port, 1);
    struct ibv_qp_init_attr attr = qp_attr();
    struct rdma_cm_id *listener, *id;
    if (!res) return fail("receiver", "rdma_getaddrinfo");
    if (rdma_create_ep(&listener, res, NULL, &attr)) return fail("receiver", "rdma_create_ep");
    if (rdma_listen(listener, 1)) return fail("receiver", "rdma_listen");
    if (write(ready_fd, "L", 1) != 1) return fail("receiver", "signal ready");
    close(ready_fd);
    if (rdma_get_request(listener, &id)) return fail("receiver", "rdma_get_request");

    char *buf = calloc(1, LEN);
    static char recv_buf[64];   /* consumed by WRITE_WITH_IMM; siw rejects 0-SGE receives */
    struct ibv_mr *mr = ibv_reg_mr(id->pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_mr *recv_mr = ibv_reg_mr(id->pd, recv_buf, sizeof recv_buf, IBV_ACCESS_LOCAL_WRITE);
    if (!buf || !mr || !recv_mr) return fail("receiver", "ibv_reg_mr");
    if (rdma_post_recv(id, NULL, recv_buf, sizeof recv_buf, recv_mr)) return fail("receiver", "rdma_post_recv");

    struct grant g = { (uintptr_t)buf, mr->rkey };
    struct rdma_conn_param cp = { .private_data = &g, .private_data_len = sizeof g,
                                  .responder_resources = 1, .initiator_depth = 1 };
    if (rdma_accept(id, &cp)) return fail("receiver", "rdma_accept");

    struct ibv_wc wc;
    if (rdma_get_recv_comp(id, &wc) <= 0) return fail("receiver", "rdma_get_recv_comp");
    int ok = wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
             (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == IMM && wc.byte_len == LEN;
    if (!ok)
        fprintf(stderr, "write_imm_probe receiver: bad completion: status=%s opcode=%d imm=0x%08x len=%u\n",
                ibv_wc_status_str(wc.status), wc.opcode, ntohl(wc.imm_data), wc.byte_len);
    for (int i = 0; ok && i < LEN; i++)
        if (buf[i] != (char)(i * 7 + 3)) {
            fprintf(stderr, "write_imm_probe receiver: data differs at byte %d\n", i);
            ok = 0;
        }
    rdma_disconnect(id);
    return ok ? 0 : 1;
}

/* Parent: connect, write with immediate; REFUSED if the device says no. */
static int writer(const char *addr, const char *port)
{
    struct rdma_addrinfo *res = resolve(addr, port, 0);
    struct ibv_qp_init_attr attr = qp_attr();
    struct rdma_cm_id *id;
    if (!res) return fail("writer", "rdma_getaddrinfo");
    if (rdma_create_ep(&id, res, NULL, &attr)) return fail("writer", "rdma_create_ep");
    char *buf = malloc(LEN);
    struct ibv_mr *mr = buf ? ibv_reg_mr(id->pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr) return fail("writer", "ibv_reg_mr");
    for (int i = 0; i < LEN; i++) buf[i] = (char)(i * 7 + 3);

    struct rdma_conn_param cp = { .responder_resources = 1, .initiator_depth = 1 };
    if (rdma_connect(id, &cp)) return fail("writer", "rdma_connect");
    struct grant g;
    if (!id->event || id->event->param.conn.private_data_len < sizeof g) {
        fprintf(stderr, "write_imm_probe writer: no grant in the private data\n");
        return 1;
    }
    memcpy(&g, id->event->param.conn.private_data, sizeof g);
    printf("device %s\n", ibv_get_device_name(id->verbs->device));

    struct ibv_sge sge = { (uintptr_t)buf, LEN, mr->lkey };
    struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                              .send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(IMM) }, *bad;
    wr.wr.rdma.remote_addr = g.addr;
    wr.wr.rdma.rkey = g.rkey;
    int err = ibv_post_send(id->qp, &wr, &bad);
    if (err) {
        printf("refused: ibv_post_send(RDMA_WRITE_WITH_IMM) = %d (%s)\n", err, strerror(abs(err)));
        return REFUSED;
    }
    struct ibv_wc wc;
    if (rdma_get_send_comp(id, &wc) <= 0) return fail("writer", "rdma_get_send_comp");
    if (wc.status != IBV_WC_SUCCESS) {   /* accepted, then failed: a real error */
        fprintf(stderr, "write_imm_probe writer: completion status %s\n", ibv_wc_status_str(wc.status));
        return 1;
    }
    rdma_disconnect(id);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s ADDR PORT\n", argv[0]);
        return 1;
    }
    int ready[2];
    if (pipe(ready)) return fail("main", "pipe");
    pid_t child = fork();
    if (child < 0) return fail("main", "fork");
    if (child == 0) {
        close(ready[0]);
        alarm(TIMEOUT_S);   /* never outlive a writer that went away */
        _exit(receiver(argv[1], argv[2], ready[1]));
    }
    close(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1) {   /* the receiver failed before listening */
        waitpid(child, NULL, 0);
        return 1;
    }
    alarm(TIMEOUT_S);
    int rc = writer(argv[1], argv[2]);
    if (rc != 0) kill(child, SIGTERM);  /* it would wait for a write that never comes */
    int status;
    waitpid(child, &status, 0);
    int child_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (rc == 0 && child_rc != 0) rc = 1;
    if (rc == 0) printf("supported: write with immediate 0x%08x delivered and verified\n", IMM);
    return rc;
}
