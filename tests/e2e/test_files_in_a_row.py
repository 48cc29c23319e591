"""Files in a row (docs/protocol.md): a RETR sent while the transfer before
it runs waits behind it and runs on its kept connection; behind a transfer
that did not end with 226 it finds none. rftp sends each next file's
commands ahead in get -r, put -r and sync downloads, files compared by
digest; a next file that cannot land after all has its transfer ended with
ABOR, and the run and the daemon go on."""

import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from conftest import PASSWORDS, TESTING  # noqa: E402
from test_daemon_hostile import assert_daemon_healthy, connect_data, echo_eod, frames_until_eod  # noqa: E402
from test_data_keep import closed_by_server, keeping_session, make_dataset, tree  # noqa: E402

RFTP = str(TESTING / "rftp")


def frames_of_one_file(data) -> bytes:
    blocks = dict(frames_until_eod(data))
    return b"".join(blocks[k] for k in sorted(blocks))


def client_env(tmp_path: Path) -> dict:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
            "RFTP_PASSWORD": PASSWORDS["alice"]}


def sent_ahead(debug_log: str) -> int:
    """Files whose first command rftp sent right after the 150 of the file
    before it (-vv): ahead. Otherwise nothing follows a 150 until its 226."""
    lines = [line for line in debug_log.splitlines() if line.startswith("debug: ")]
    return sum(1 for before, line in zip(lines, lines[1:])
               if before.startswith("debug: <-- 150 ") and line.startswith(("debug: --> SIZE ", "debug: --> ALLO ")))


def test_a_retr_sent_during_a_transfer_runs_next_on_its_kept_connection(rftpd):
    root = rftpd.roots["alice"]
    a, b = os.urandom(100_000), os.urandom(3000)
    (root / "a.bin").write_bytes(a)
    (root / "b.bin").write_bytes(b)
    c = keeping_session(rftpd)
    data = connect_data(c.epsv_port())
    code, text = c.cmd("RETR a.bin")
    assert code == 150, text
    assert frames_of_one_file(data) == a
    # The next file's commands, before a's end is echoed: they wait behind it.
    c.send(b"SIZE b.bin\r\nRETR b.bin\r\n")
    data.sendall(echo_eod(len(a)))
    assert c.reply()[0] == 226
    assert c.reply() == (213, "213 3000")
    code, text = c.reply()
    assert code == 150, text
    assert frames_of_one_file(data) == b
    data.sendall(echo_eod(len(b)))
    assert c.reply()[0] == 226
    assert rftpd.log().count("command=EPSV") == 1


def test_a_retr_waiting_behind_an_aborted_transfer_finds_no_connection(rftpd):
    root = rftpd.roots["alice"]
    (root / "a.bin").write_bytes(os.urandom(100_000))
    (root / "b.bin").write_bytes(b"b" * 10)
    c = keeping_session(rftpd)
    data = connect_data(c.epsv_port())
    code, text = c.cmd("RETR a.bin")
    assert code == 150, text
    frames_of_one_file(data)
    # a's end is never echoed: ABOR goes ahead of the waiting RETR and ends a.
    c.send(b"RETR b.bin\r\nABOR\r\n")
    assert c.reply()[0] == 426
    assert c.reply()[0] == 226
    code, text = c.reply()
    assert code == 425, text
    assert closed_by_server(data)
    assert c.code("NOOP") == 200


def test_get_r_sends_each_next_files_commands_ahead(rftpd, tmp_path):
    env = client_env(tmp_path)
    src = rftpd.roots["alice"] / "set"
    want = make_dataset(src)
    down = tmp_path / "down"
    down.mkdir()
    # Blocks of 256 KiB: the 1 MiB files take two streams, the rest one, so
    # the run changes its kept connections between the two.
    r = subprocess.run([RFTP, "-vv", "-j", "2", "-P", "2", "--block-size", "256K", "get", "-r",
                        f"rftp://alice@127.0.0.1:{rftpd.port}/set/", str(down)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(down / "set") == want
    ahead = sent_ahead(r.stderr)
    assert ahead >= 200, ahead
    assert "ABOR" not in r.stderr
    assert [p for p in down.rglob("*") if ".rftp-" in p.name] == []


def test_put_r_sends_each_next_files_stor_ahead(rftpd, tmp_path):
    env = client_env(tmp_path)
    src = tmp_path / "src"
    want = make_dataset(src)
    r = subprocess.run([RFTP, "-vv", "-j", "2", "-P", "2", "--block-size", "256K", "put", "-r", str(src),
                        f"rftp://alice@127.0.0.1:{rftpd.port}/up/"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(rftpd.roots["alice"] / "up" / "src") == want
    assert sent_ahead(r.stderr) >= 200, sent_ahead(r.stderr)
    assert "ABOR" not in r.stderr
    assert rftpd.log().count("command=STOR") == 300


def test_a_stor_sent_ahead_and_refused_fails_only_its_file(rftpd, tmp_path):
    env = client_env(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    want = {f"s{i:02d}.bin": os.urandom(100 + i) for i in range(40)}
    for name, body in want.items():
        (src / name).write_bytes(body)
    # On the server a directory holds s20.bin's name: its STOR, sent ahead,
    # is refused when its turn comes, and the files after it go on.
    (rftpd.roots["alice"] / "up" / "src" / "s20.bin").mkdir(parents=True)
    r = subprocess.run([RFTP, "-vv", "-j", "1", "--continue-on-error", "put", "-r", str(src),
                        f"rftp://alice@127.0.0.1:{rftpd.port}/up/"], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode not in (0, 3, 8), r.stderr[-3000:]
    assert "s20.bin" in r.stderr
    stored = tree(rftpd.roots["alice"] / "up" / "src")
    del want["s20.bin"]
    assert stored == want
    assert sent_ahead(r.stderr) >= 35, sent_ahead(r.stderr)
    assert_daemon_healthy(rftpd)


def test_sync_down_sends_each_next_copys_commands_ahead(rftpd, tmp_path):
    env = client_env(tmp_path)
    src = rftpd.roots["alice"] / "campaign"
    want = make_dataset(src)
    mirror = tmp_path / "mirror"
    r = subprocess.run([RFTP, "-vv", "-j", "2", "sync", f"rftp://alice@127.0.0.1:{rftpd.port}/campaign/",
                        str(mirror)], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert tree(mirror) == want
    assert sent_ahead(r.stderr) >= 200, sent_ahead(r.stderr)
    for rel in want:
        assert int((mirror / rel).stat().st_mtime) == int((src / rel).stat().st_mtime), rel


def test_a_next_file_that_cannot_land_has_its_transfer_sent_ahead_aborted(rftpd, tmp_path):
    env = client_env(tmp_path)
    src = rftpd.roots["alice"] / "set"
    want = {f"f{i:03d}.bin": os.urandom(1000 + i) for i in range(60)}
    for name, body in want.items():
        (src / name).parent.mkdir(exist_ok=True)
        (src / name).write_bytes(body)
    down = tmp_path / "down"
    # Where f030.bin's partial file would go, a directory: its SIZE and RETR
    # went ahead, but it cannot be opened. Largest first: it comes mid-run.
    (down / "set" / "f030.bin.rftp-part").mkdir(parents=True)
    r = subprocess.run([RFTP, "-vv", "-j", "1", "--continue-on-error", "get", "-r",
                        f"rftp://alice@127.0.0.1:{rftpd.port}/set/", str(down)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 6, r.stderr[-3000:]
    assert "f030.bin.rftp-part is a directory" in r.stderr
    # The RETR sent ahead for it was answered 150; rftp closed the kept
    # connections it ran on, and read its end (226 if it was all sent,
    # else 426). The files after it went over new connections.
    assert "sent ahead and not wanted: RETR, answered 150" in r.stderr
    assert "--> ABOR" not in r.stderr
    got = {k: v for k, v in tree(down / "set").items()}
    assert got == {k: v for k, v in want.items() if k != "f030.bin"}
    assert sent_ahead(r.stderr) >= 50
    assert_daemon_healthy(rftpd)

    # Without --continue-on-error the run stops there, its RETR ahead still
    # unanswered at QUIT: the daemon ends that transfer and serves on.
    for name in want:
        (down / "set" / name).unlink(missing_ok=True)
    r = subprocess.run([RFTP, "-j", "1", "get", "-r", f"rftp://alice@127.0.0.1:{rftpd.port}/set/", str(down)],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 6, r.stderr[-3000:]
    assert not (down / "set" / "f030.bin").exists()
    assert_daemon_healthy(rftpd)
