"""Downloads of one block without the echo (OPTS DATAKEEP ON UNECHOED,
docs/protocol.md): on kept connections a RETR of at most one block ends
with an EOD frame that wants no echo, the 226 follows at once and the next
RETR's frames follow on the same connection. Larger downloads and every
upload keep the echo. rftp agrees to it; a damaged block of such a file
fails only that file, and -c fetches it."""

import os
import select
import struct
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, Rftpd, TESTING  # noqa: E402
from test_daemon_hostile import (BLOCK, Control, assert_daemon_healthy, connect_data, crc32c, echo_eod, eod,  # noqa: E402
                                 frame, recv_exact)
from test_data_keep import keeping_session, make_dataset, tree  # noqa: E402

RFTP = str(TESTING / "rftp")
EOD, EOD_UNECHOED = 0x08, 0x0C


def frames_until_any_eod(sock):
    """(payload by offset, the EOD frame's descriptor and offset); each CRC32C checked."""
    blocks = {}
    while True:
        descriptor, count, offset = struct.unpack(">BQQ", recv_exact(sock, 17))
        if descriptor in (EOD, EOD_UNECHOED):
            assert count == 0
            return b"".join(blocks[k] for k in sorted(blocks)), descriptor, offset
        assert descriptor == 0x00, descriptor
        payload = recv_exact(sock, count)
        assert struct.unpack(">I", recv_exact(sock, 4))[0] == crc32c(payload)
        blocks[offset] = payload


def nothing_to_read(sock, seconds: float) -> bool:
    return not select.select([sock], [], [], seconds)[0]


def test_feat_offers_it_and_opts_takes_it_only_with_on(rftpd):
    c = Control(rftpd)
    c.login()
    assert " DATAKEEP UNECHOED" in c.cmd("FEAT")[1]
    assert c.code("OPTS DATAKEEP OFF UNECHOED") == 501
    assert c.code("OPTS DATAKEEP ON LATER") == 501
    assert c.code("OPTS DATAKEEP ON UNECHOED NOW") == 501
    assert c.cmd("OPTS DATAKEEP ON")[1] == "200 DATAKEEP ON"
    assert c.cmd("OPTS DATAKEEP ON UNECHOED")[1] == "200 DATAKEEP ON UNECHOED"


def test_one_block_downloads_follow_each_other_without_an_echo(rftpd):
    root = rftpd.roots["alice"]
    small = {f"s{i}.bin": os.urandom(size) for i, size in enumerate([0, 1, 4096, BLOCK])}
    for name, body in small.items():
        (root / name).write_bytes(body)
    big = os.urandom(2 * BLOCK + 5)
    (root / "big.bin").write_bytes(big)
    c = keeping_session(rftpd, unechoed=True)
    data = connect_data(c.epsv_port())
    # Every RETR in one write: each runs as the one before ends, which
    # for a file of one block needs nothing from this side.
    c.send("".join(f"RETR {name}\r\n" for name in small).encode())
    for name, body in small.items():
        code, text = c.reply()
        assert code == 150, text
        got, descriptor, size = frames_until_any_eod(data)
        assert (got, descriptor, size) == (body, EOD_UNECHOED, len(body)), name
        code, text = c.reply()
        assert code == 226, text
    # Nothing was sent back, and nothing is owed: a file of more blocks
    # keeps the echo, and its 226 waits for it.
    code, text = c.cmd("RETR big.bin")
    assert code == 150, text
    got, descriptor, size = frames_until_any_eod(data)
    assert (got, descriptor, size) == (big, EOD, len(big))
    assert nothing_to_read(c.sock, 1.0), "226 before the echo"
    data.sendall(echo_eod(len(big)))
    assert c.reply()[0] == 226
    # An upload keeps it too: the server echoes, then answers.
    code, text = c.cmd("STOR up.bin")
    assert code == 150, text
    data.sendall(frame(0, small["s2.bin"]) + eod(4096))
    assert recv_exact(data, 17) == echo_eod(4096)
    assert c.reply()[0] == 226
    assert (root / "up.bin").read_bytes() == small["s2.bin"]
    assert rftpd.log().count("command=EPSV") == 1
    assert_daemon_healthy(rftpd)


def test_without_unechoed_a_one_block_download_keeps_its_echo(rftpd):
    (rftpd.roots["alice"] / "one.bin").write_bytes(b"x" * 1000)
    c = keeping_session(rftpd)
    data = connect_data(c.epsv_port())
    assert c.cmd("RETR one.bin")[0] == 150
    assert frames_until_any_eod(data) == (b"x" * 1000, EOD, 1000)
    assert nothing_to_read(c.sock, 1.0), "226 before the echo"
    data.sendall(echo_eod(1000))
    assert c.reply()[0] == 226


def client_env(tmp_path: Path) -> dict:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
            "RFTP_PASSWORD": PASSWORDS["alice"]}


def test_rftp_gets_a_tree_unechoed_and_a_damaged_file_fails_alone(tmp_path, place):
    """rftpd damages the first block it sends (the test-only switch): in a
    many-file run that is a file of one block, which is not sent again.
    That file fails clearly, the others arrive, and -c fetches it."""
    d = Rftpd(place / "flipping", env_extra={"RFTP_TEST_FLIP_BLOCKS": "1"})
    try:
        want = make_dataset(d.roots["alice"] / "set")
        env = client_env(tmp_path)
        down = tmp_path / "down"
        down.mkdir()
        url = f"rftp://alice@127.0.0.1:{d.port}/set/"
        r = subprocess.run([RFTP, "-vv", "-j", "1", "--retries", "0", "--continue-on-error", "get", "-r", url,
                            str(down)], env=env, capture_output=True, text=True, timeout=300)
        assert "--> OPTS DATAKEEP ON UNECHOED" in r.stderr
        assert r.returncode == 8, r.stderr[-3000:]
        assert "the only block of a file is not sent again" in r.stderr, r.stderr[-3000:]
        got = {k: v for k, v in tree(down / "set").items() if ".rftp-" not in k}
        missing = [k for k in want if k not in got]
        assert len(missing) == 1, missing
        assert all(got[k] == want[k] for k in got)
        r = subprocess.run([RFTP, "-j", "1", "get", "-c", "-r", url, str(down)], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        assert tree(down / "set") == want
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]


def commands_right_after_first_150(debug_log: str) -> list:
    """The commands rftp sent right after the first RETR's 150, before it read anything else."""
    lines = [line for line in debug_log.splitlines() if line.startswith("debug: ")]
    first = next(i for i, line in enumerate(lines) if line.startswith("debug: <-- 150 Opening BINARY"))
    sent = []
    for line in lines[first + 1:]:
        if not line.startswith("debug: --> "):
            break
        sent.append(line.split()[2])
    return sent


def small_files(src, count: int, stem: str) -> dict:
    """count files of growing sizes under src, names with a space: {name: bytes}."""
    src.mkdir(exist_ok=True)
    want = {f"{stem} {i:02d}.bin": os.urandom(100 + 37 * i) for i in range(count)}
    for name, body in want.items():
        (src / name).write_bytes(body)
    return want


def test_rftp_keeps_four_downloads_ahead_and_moves_them_whole(rftpd, tmp_path):
    src = rftpd.roots["alice"] / "many"
    want = small_files(src, 80, "m")
    down = tmp_path / "down"
    down.mkdir()
    r = subprocess.run([RFTP, "-vv", "-j", "1", "get", "-r", f"rftp://alice@127.0.0.1:{rftpd.port}/many/",
                        str(down)], env=client_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(down / "many") == want
    # At the first file's 150, the next four files' SIZE and RETR went out.
    assert commands_right_after_first_150(r.stderr) == ["SIZE", "RETR"] * 4, r.stderr[-5000:]
    log = rftpd.log()
    assert log.count("command=RETR") == 80 and log.count("command=EPSV") <= 2
    assert "--> ABOR" not in r.stderr


def test_sync_keeps_four_downloads_ahead_as_get_r_does(rftpd, tmp_path):
    src = rftpd.roots["alice"] / "many"
    want = small_files(src, 40, "s")
    r = subprocess.run([RFTP, "-vv", "-j", "1", "sync", f"rftp://alice@127.0.0.1:{rftpd.port}/many/",
                        str(tmp_path / "copy")], env=client_env(tmp_path), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(tmp_path / "copy") == want
    assert commands_right_after_first_150(r.stderr) == ["SIZE", "RETR"] * 4, r.stderr[-5000:]
    # Each copy has its source's time, set from the listing: no MDTM came between.
    assert all(int((tmp_path / "copy" / n).stat().st_mtime) == int((src / n).stat().st_mtime) for n in want)
    assert "--> MDTM" not in r.stderr and "--> ABOR" not in r.stderr
