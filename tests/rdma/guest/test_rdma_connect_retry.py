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


SIW_STALL = "no RDMA progress for 20 s"


def transfer(iwarp, command, *args, env):
    """rftp -v COMMAND -P 2 ARGS with every queue pair's first connect made
    to fail. Returns the first attempt's stderr (where the retries show) and
    the final result. On siw, after every queue pair was reconnected, the
    client's first SEND on the control queue pair now and then never leaves
    (a stall in siw's transmit path, seen with the channel's debug lines:
    posted, never completed, never received, while the server's sends still
    arrive; more often under CPU load). The channel's watchdog turns it into
    exit 8 with the partial file kept; that is resumed with -c, as a user
    would, on a channel set up without the forced failures. Any other
    failure fails the test."""
    first, summary = rftp("-v", command, "-P", "2", *args, env_extra=env, check=False)
    p = first
    if iwarp and p.returncode == 8 and SIW_STALL in p.stderr:
        print(f"siw transmit stall on {command}; resuming with -c")
        p, summary = rftp("-v", command, "-c", "-P", "2", *args, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    return first.stderr, summary


def test_a_queue_pair_whose_port_is_taken_connects_again(daemon, device, tmp_path):
    name, addr = device
    iwarp = expected_notice(name) == "write_then_send"
    src = tmp_path / "retry.bin"
    write_pattern(src, 3 * BLOCK + 4097, 31)
    remote = f"retry-{name}.bin"
    env = {"RFTP_TEST_RDMA_CONNECT_FROM": str(HELD_PORT)}
    with socket.create_server(("0.0.0.0", HELD_PORT)):
        up_err, up = transfer(iwarp, "put", str(src), url(addr, remote), env=env)
        back = tmp_path / "back.bin"
        down_err, down = transfer(iwarp, "get", url(addr, remote), str(back), env=env)
    for stderr, summary in ((up_err, up), (down_err, down)):
        assert summary["transport"] == "rdma", stderr[-2000:]
        assert "Address already in use" in stderr, stderr[-2000:]
        # -P 2: two data queue pairs after the control one, 0.
        assert retried_queue_pairs(stderr) == ({"0", "1", "2"} if iwarp else {"1", "2"}), stderr[-2000:]
    assert digest(daemon.root / remote) == digest(src)
    assert digest(back) == digest(src)
    (daemon.root / remote).unlink()
