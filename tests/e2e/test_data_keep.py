"""Kept data connections (OPTS DATAKEEP, docs/protocol.md): framed RETR and
STOR carry file after file on the connections the first one opened, with no
EPSV, connect or token in between; anything that ends them ends them on both
sides; bytes out of place on a kept connection fail only that transfer. And
rftp's many-file runs use them, files compared by digest."""

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, TESTING  # noqa: E402
from test_daemon_hostile import (BLOCK, Control, assert_daemon_healthy, connect_data, echo_eod, eod, frame,  # noqa: E402
                                 frames_until_eod, recv_exact)

RFTP = str(TESTING / "rftp")


def framed_get(c: Control, data: socket.socket, name: str) -> bytes:
    """RETR on data, already open: the file's bytes, once its EOD is echoed and 226 read."""
    code, text = c.cmd(f"RETR {name}")
    assert code == 150, text
    blocks = dict(frames_until_eod(data))
    body = b"".join(blocks[k] for k in sorted(blocks))
    data.sendall(echo_eod(len(body)))
    code, text = c.reply()
    assert code == 226, text
    return body


def framed_put(c: Control, data: socket.socket, name: str, body: bytes):
    code, text = c.cmd(f"STOR {name}")
    assert code == 150, text
    blocks = b"".join(frame(at, body[at:at + BLOCK]) for at in range(0, len(body), BLOCK))
    data.sendall(blocks + eod(len(body)))
    assert recv_exact(data, 17) == echo_eod(len(body))
    code, text = c.reply()
    assert code == 226, text


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(10)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


def keeping_session(rftpd, streams: int = 1, unechoed: bool = False) -> Control:
    c = Control(rftpd)
    c.login()
    assert c.code("TYPE I") == 200
    keep = "DATAKEEP ON UNECHOED" if unechoed else "DATAKEEP ON"
    assert c.cmd(f"OPTS {keep}")[1] == f"200 {keep}"
    assert c.cmd(f"OPTS PARALLEL {streams} {BLOCK}")[1] == f"200 PARALLEL {streams} {BLOCK}"
    return c


def test_files_follow_each_other_on_the_connection_the_first_opened(rftpd):
    root = rftpd.roots["alice"]
    files = {f"f{i}.bin": os.urandom(size) for i, size in enumerate([0, 1, BLOCK, BLOCK + 7, 3 * BLOCK])}
    for name, body in files.items():
        (root / name).write_bytes(body)
    c = keeping_session(rftpd)
    assert "DATAKEEP" in c.cmd("FEAT")[1]
    data = connect_data(c.epsv_port())
    for name, body in files.items():
        assert framed_get(c, data, name) == body, name
    up = os.urandom(2 * BLOCK + 3)
    framed_put(c, data, "up.bin", up)
    assert (root / "up.bin").read_bytes() == up
    assert framed_get(c, data, "up.bin") == up
    assert rftpd.log().count("command=EPSV") == 1


def test_what_ends_kept_connections_ends_them_on_the_servers_side(rftpd):
    (rftpd.roots["alice"] / "a.bin").write_bytes(b"a" * 1000)
    c = keeping_session(rftpd)
    first = connect_data(c.epsv_port())
    framed_get(c, first, "a.bin")
    # A new passive port: the kept connection goes.
    second = connect_data(c.epsv_port())
    assert closed_by_server(first)
    framed_get(c, second, "a.bin")
    # Another number of streams: kept connections no longer fit.
    assert c.cmd(f"OPTS PARALLEL 2 {BLOCK}")[0] == 200
    assert closed_by_server(second)
    code, text = c.cmd("RETR a.bin")
    assert code == 425, text
    # OPTS DATAKEEP OFF: the transfer's connections close as without it.
    assert c.cmd(f"OPTS PARALLEL 1 {BLOCK}")[0] == 200
    third = connect_data(c.epsv_port())
    framed_get(c, third, "a.bin")
    assert c.cmd("OPTS DATAKEEP OFF")[1] == "200 DATAKEEP OFF"
    assert closed_by_server(third)
    assert c.code("NOOP") == 200


def test_bytes_out_of_place_on_a_kept_connection_fail_only_that_transfer(rftpd):
    root = rftpd.roots["alice"]
    (root / "a.bin").write_bytes(b"a" * 1000)
    c = keeping_session(rftpd)
    data = connect_data(c.epsv_port())
    framed_get(c, data, "a.bin")
    # Between transfers the server reads nothing; the next one reads this
    # as its frames and refuses it.
    data.sendall(b"not a frame at all, and more of it" * 3)
    code, text = c.cmd("STOR b.bin")
    assert code == 150, text
    code, text = c.reply()
    assert code in (426, 451), text
    assert not (root / "b.bin").exists()
    # The failed transfer's connection is not kept: a new one serves.
    assert closed_by_server(data)
    assert c.code("RETR a.bin") == 425
    fresh = connect_data(c.epsv_port())
    assert framed_get(c, fresh, "a.bin") == b"a" * 1000
    # A client that closed its kept connection: the transfer fails, the session goes on.
    fresh.close()
    code, text = c.cmd("RETR a.bin")
    if code == 150:
        code, text = c.reply()
    assert code in (425, 426), text
    assert c.code("NOOP") == 200
    assert_daemon_healthy(rftpd)


def make_dataset(root: Path) -> dict:
    """300 files, empty to a few blocks, some with spaces and non-ASCII in their names."""
    rng = random.Random(40)
    names = ["plain", "with space", "ünïcødé", "日本語"]
    want = {}
    for i in range(300):
        rel = Path(names[i % 4]) / f"{names[(i // 4) % 4]}-{i:03d}.dat"
        size = rng.choice([0, 1, 511, 4096, 65535, 200_000, 1 << 20])
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(rng.randbytes(size))
        want[rel.as_posix()] = (root / rel).read_bytes()
    return want


def tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_rftp_moves_a_tree_over_kept_connections_both_ways(rftpd, tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "RFTP_PASSWORD": PASSWORDS["alice"]}
    src = tmp_path / "src"
    want = make_dataset(src)
    base = f"rftp://alice@127.0.0.1:{rftpd.port}"
    up = subprocess.run([RFTP, "-j", "3", "put", "-r", str(src), f"{base}/up/"], env=env, capture_output=True,
                        timeout=300)
    assert up.returncode == 0, up.stderr
    assert tree(rftpd.roots["alice"] / "up" / "src") == want
    log = rftpd.log()
    assert log.count("command=STOR") == 300
    # One passive port a session, not one a file.
    assert log.count("command=EPSV") <= 3, log.count("command=EPSV")

    down = tmp_path / "down"
    down.mkdir()
    mark = len(rftpd.log())
    got = subprocess.run([RFTP, "-j", "3", "get", "-r", f"{base}/up/src/", str(down)], env=env,
                         capture_output=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert tree(down / "src") == want
    log = rftpd.log()[mark:]
    assert log.count("command=RETR") == 300
    # The tree's listing takes one (MLSR, on a plain connection), the files none.
    assert log.count("command=MLSR") == 1 and log.count("command=MLSD") == 0
    assert log.count("command=EPSV") <= 1 + 3
    assert [p for p in down.rglob("*") if ".rftp-part" in p.name] == []


def test_a_tree_interrupted_mid_batch_is_finished_by_c(rftpd, tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "RFTP_PASSWORD": PASSWORDS["alice"]}
    src = rftpd.roots["alice"] / "set"
    want = make_dataset(src)
    for i in range(1500):  # enough files that the interrupt lands mid-batch
        (src / "more" / f"m{i:04d}.dat").parent.mkdir(exist_ok=True)
        (src / "more" / f"m{i:04d}.dat").write_bytes(i.to_bytes(4, "big") * 1000)
        want[f"more/m{i:04d}.dat"] = (src / "more" / f"m{i:04d}.dat").read_bytes()
    down = tmp_path / "down"
    down.mkdir()
    url = f"rftp://alice@127.0.0.1:{rftpd.port}/set/"
    proc = subprocess.Popen([RFTP, "-j", "2", "get", "-r", url, str(down)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    # Interrupted once files have arrived over the kept connections (no time asserted).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and sum(1 for p in down.rglob("*.dat")) < 100:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGINT, err
    got = {k: v for k, v in tree(down / "set").items() if not k.endswith((".rftp-part", ".rftp-resume"))}
    assert 0 < len(got) < len(want), len(got)
    # Nothing incomplete under a final name.
    assert all(want[k] == v for k, v in got.items())

    r = subprocess.run([RFTP, "-c", "-j", "2", "get", "-r", url, str(down)], env=env, capture_output=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert tree(down / "set") == want
    assert rftpd.alive()
