"""A queue pair whose local port is taken connects again from a new one.

iWARP connects from a real TCP port that the RDMA CM picks without asking
TCP, so now and then rdma_connect finds it taken (EADDRINUSE); the client
then starts that queue pair again from a new id. The collision is random, so
the client's test-only switch RFTP_TEST_RDMA_CONNECT_FROM=PORT makes every
queue pair's first try bind to PORT, which this test holds with a TCP
listener: on siw0 every queue pair's first connect fails in the real device
and is retried. On rxe0 (RoCE: no TCP underneath) the first queue pair gets
PORT and the second finds it taken in the CM's own port space, so it is
retried there, as is every later one. Either way the replaced queue pair's flushed completions must
not fail the channel: the files go both ways over RDMA, whole."""

import re
import socket

from conftest import expected_notice, rftp, url
from test_rdma_transfers import BLOCK, digest, write_pattern

HELD_PORT = 29876  # below the guest's ephemeral range: nothing else takes it


def retried_queue_pairs(stderr: str) -> set[str]:
    return set(re.findall(r"event=rdma_connect_retry queue_pair=(\d+) ", stderr))


def test_a_queue_pair_whose_port_is_taken_connects_again(daemon, device, tmp_path):
    name, addr = device
    iwarp = expected_notice(name) == "write_then_send"
    src = tmp_path / "retry.bin"
    write_pattern(src, 3 * BLOCK + 4097, 31)
    remote = f"retry-{name}.bin"
    env = {"RFTP_TEST_RDMA_CONNECT_FROM": str(HELD_PORT)}
    with socket.create_server(("0.0.0.0", HELD_PORT)):
        up_p, up = rftp("-v", "put", "-P", "2", str(src), url(addr, remote), env_extra=env)
        back = tmp_path / "back.bin"
        down_p, down = rftp("-v", "get", "-P", "2", url(addr, remote), str(back), env_extra=env)
    for p, summary in ((up_p, up), (down_p, down)):
        assert summary["transport"] == "rdma", p.stderr[-2000:]
        assert "Address already in use" in p.stderr, p.stderr[-2000:]
        # -P 2: two data queue pairs after the control one, 0.
        assert retried_queue_pairs(p.stderr) == ({"0", "1", "2"} if iwarp else {"1", "2"}), p.stderr[-2000:]
    assert digest(daemon.root / remote) == digest(src)
    assert digest(back) == digest(src)
    (daemon.root / remote).unlink()
