"""The client closes each framed data connection first, whichever way the
file goes, so the TIME_WAIT a closed TCP connection leaves behind for a
minute stays on the client (docs/protocol.md, "Parallel streams"). A daemon
that closed first kept one on a passive port for every file, and the bind of
each new passive port walks them: with about ten thousand, that bind was a
third of rftpd's CPU on small files. A client that never closes costs the
daemon only its data timeout."""

import socket
import time

from conftest import free_port
from test_client_rftpd import MiB, env, random_file, rftp, sha256, url  # noqa: F401 (env is a fixture)
from test_daemon_hostile import A, BLOCK, TIMEOUT, Control, assert_daemon_healthy, connect_data, eod, frame, recv_exact

TIME_WAIT = "06"


def time_wait_sockets() -> set:
    """Every TIME_WAIT socket on loopback, as (local port, remote port, line)."""
    found = set()
    for line in open("/proc/net/tcp").read().splitlines()[1:]:
        fields = line.split()
        if fields[3] != TIME_WAIT:
            continue
        local, remote = (int(f.split(":")[1], 16) for f in fields[1:3])
        found.add((local, remote, fields[1] + " " + fields[2]))
    return found


def time_waits(port: int, before=frozenset()) -> tuple[int, int]:
    """TIME_WAIT sockets on loopback, not among those of before, whose own
    port is port (the daemon's side of a data connection), and whose peer's
    port is (the client's side). An earlier test's connections to a passive
    port of the same number may still linger: before holds them."""
    ours = theirs = 0
    for local, remote, _ in time_wait_sockets() - before:
        ours += local == port
        theirs += remote == port
    return ours, theirs


def test_framed_transfers_leave_time_wait_with_the_client(rftpd_factory, env, tmp_path):
    # One passive port, so the daemon's side of every data connection is known.
    port = free_port()
    d = rftpd_factory(f"passive_ports: {{min: {port}, max: {port}}}\n")
    src = random_file(tmp_path / "src.bin", 3 * MiB + 5)
    before = frozenset(time_wait_sockets())
    for args in (["put", "-P", "2", "--block-size", "1M", str(src), url(d, "up.bin")],
                 ["get", "-P", "2", "--block-size", "1M", url(d, "up.bin"), str(tmp_path / "down.bin")]):
        r = rftp(env, "--no-progress", "--transport", "tcp", *args)
        assert r.returncode == 0, r.stderr
    assert sha256(tmp_path / "down.bin") == sha256(src)
    # The sockets reach TIME_WAIT as the connections finish closing.
    deadline = time.monotonic() + 5
    while time_waits(port, before)[1] < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    ours, theirs = time_waits(port, before)
    assert (ours, theirs) == (0, 4), f"TIME_WAIT on the daemon's side {ours}, on the client's {theirs}"


def test_a_client_that_never_closes_costs_the_daemon_its_data_timeout(rftpd_factory):
    d = rftpd_factory("timeouts: {data: 2}\n")
    c = Control(d)
    c.login()
    c.code("TYPE I")
    assert c.cmd(f"OPTS PARALLEL 1 {BLOCK}")[1] == f"200 PARALLEL 1 {BLOCK}"
    data = connect_data(c.epsv_port())
    code, text = c.cmd("STOR kept.bin")
    assert code == 150, text
    data.sendall(frame(0, A[:BLOCK]) + frame(BLOCK, A[BLOCK:]) + eod(len(A)))
    # The echo says both blocks are written; this client then keeps its side open.
    assert recv_exact(data, 17)[0] == 0x08
    started = time.monotonic()
    code, text = c.reply()
    waited = time.monotonic() - started
    assert code == 226, text
    assert 1 < waited < TIMEOUT, f"the daemon answered after {waited:.1f} s"
    assert data.recv(1) == b""  # and then closed its side
    data.close()
    assert (d.roots["alice"] / "kept.bin").read_bytes() == A
    c.code("OPTS PARALLEL 0")
    c.cmd("QUIT")
    assert_daemon_healthy(d)
