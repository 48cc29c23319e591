"""A file-system call that takes long (unlinking a large file frees its
blocks inside the call: 0.8 s for 6 GB on the bench machine's disk) runs off
rftpd's event loop: other sessions are answered meanwhile. The slowness is
played by an LD_PRELOAD shim (shims/slow_unlink.c) that holds unlinkat and
renameat of names starting with "slow-" until the test opens a gate (a
file), which it does only once another session was answered, or for at
most 10 s; the daemon, its file system and its clients are real."""

import ftplib
import io
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, Rftpd

SHIM_SOURCE = Path(__file__).parent / "shims" / "slow_unlink.c"


@pytest.fixture(scope="module")
def slow_rftpd(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("SKIPPED: no C compiler for the test's LD_PRELOAD shim")
    work = tmp_path_factory.mktemp("slow")
    shim = work / "slow_unlink.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(shim), str(SHIM_SOURCE), "-ldl"], check=True)
    d = Rftpd(work, env_extra={"LD_PRELOAD": str(shim), "SLOW_UNLINK_GATE": str(work / "gate")})
    d.gate = work / "gate"
    yield d
    d.stop()


def login(d):
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=30)
    f.login("alice", PASSWORDS["alice"])
    return f


@pytest.mark.parametrize("command", ["DELE slow-big.bin", "RNTO slow-big.bin", "COMT slow-big.bin"])
def test_other_sessions_are_answered_while_a_slow_unlink_runs(slow_rftpd, command):
    root = slow_rftpd.roots["alice"]
    slow_rftpd.gate.unlink(missing_ok=True)
    (root / "slow-big.bin").write_bytes(b"x" * 1000)
    (root / "other.bin").write_bytes(b"y")
    a, b = login(slow_rftpd), login(slow_rftpd)
    if command.startswith("RNTO"):
        assert a.sendcmd("RNFR other.bin").startswith("350")
    if command.startswith("COMT"):  # an upload held aside, put in place over the old file
        a.voidcmd("TYPE I")
        assert a.sendcmd("HOLD").startswith("200")
        a.storbinary("STOR slow-big.bin", io.BytesIO(b"held"))
    order = []
    slow = threading.Thread(target=lambda: order.append(("slow", a.sendcmd(command))))
    slow.start()
    try:
        # Once rftpd has the slow command, B's NOOP and an upload of B's own
        # come back while it runs, not after it.
        verb = command.split()[0]
        deadline = time.monotonic() + 10
        while f"command={verb} argument=slow-big.bin" not in slow_rftpd.log() and time.monotonic() < deadline:
            time.sleep(0.005)
        order.append(("noop", b.sendcmd("NOOP")))
        b.storbinary("STOR b.bin", io.BytesIO(b"from b"))
        order.append(("stor", "226"))
    finally:
        slow_rftpd.gate.touch()
        slow.join(timeout=30)
    assert [what for what, _ in order] == ["noop", "stor", "slow"], order
    assert order[-1][1].startswith("250"), order
    assert (root / "b.bin").read_bytes() == b"from b"
    if command.startswith("DELE"):
        assert not (root / "slow-big.bin").exists()
    elif command.startswith("RNTO"):
        assert not (root / "other.bin").exists() and (root / "slow-big.bin").read_bytes() == b"y"
    else:
        assert (root / "slow-big.bin").read_bytes() == b"held"
    a.quit()
    b.quit()


def test_a_change_is_logged_though_its_client_left_while_it_ran(slow_rftpd):
    """The reply goes nowhere once the client has gone, but the operator's
    log still says the file was deleted."""
    root = slow_rftpd.roots["alice"]
    slow_rftpd.gate.unlink(missing_ok=True)
    (root / "slow-gone.bin").write_bytes(b"x")
    a = login(slow_rftpd)
    a.putcmd("DELE slow-gone.bin")
    deadline = time.monotonic() + 10
    while "command=DELE argument=slow-gone.bin" not in slow_rftpd.log() and time.monotonic() < deadline:
        time.sleep(0.005)
    a.close()
    time.sleep(0.2)  # the session's end reaches the loop first; the DELE goes on regardless
    slow_rftpd.gate.touch()
    deadline = time.monotonic() + 10
    while (root / "slow-gone.bin").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not (root / "slow-gone.bin").exists()
    deadline = time.monotonic() + 5
    while "event=delete path=/slow-gone.bin" not in slow_rftpd.log() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert "event=delete path=/slow-gone.bin" in slow_rftpd.log()


def test_a_stop_held_by_slow_work_says_which_session_holds_it(tmp_path):
    """SIGTERM ends every session at once, but work under way on a hung disk
    holds the stop until it returns (or systemd's SIGKILL): the log says
    what it waits for and whose it is, after a few seconds, so the operator
    need not guess why `systemctl stop` hangs. Once the work returns the
    daemon stops cleanly."""
    if shutil.which("cc") is None:
        pytest.skip("SKIPPED: no C compiler for the test's LD_PRELOAD shim")
    shim = tmp_path / "slow_unlink.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(shim), str(SHIM_SOURCE), "-ldl"], check=True)
    gate = tmp_path / "gate"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)  # systemd's NOTIFY_SOCKET, played
    notify.bind(str(tmp_path / "notify"))
    notify.settimeout(10)
    d = Rftpd(tmp_path / "d", env_extra={"LD_PRELOAD": str(shim), "SLOW_UNLINK_GATE": str(gate),
                                         "NOTIFY_SOCKET": str(tmp_path / "notify")})
    try:
        (d.roots["alice"] / "slow-held.bin").write_bytes(b"x")
        a = login(d)
        a.putcmd("DELE slow-held.bin")
        deadline = time.monotonic() + 10
        while "command=DELE argument=slow-held.bin" not in d.log() and time.monotonic() < deadline:
            time.sleep(0.005)
        d.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 9  # the shim lets go after 10 s
        while "event=stop_waiting" not in d.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert re.search(r'event=stop_waiting seconds=\d+ for="session=\d+ peer=127\.0\.0\.1 user=alice '
                         r'command=DELE argument=slow-held\.bin"', d.log()), d.log()
        # And `systemctl status rftpd` says so: READY, STOPPING, then the wait.
        messages = [notify.recv(4096).decode() for _ in range(3)]
        assert messages[0].startswith("READY=1") and messages[1].startswith("STOPPING=1"), messages
        assert re.fullmatch(r"STATUS=Stopping: \d+ s waiting for 1 piece\(s\) of work, the oldest: session=\d+ "
                            r"peer=127\.0\.0\.1 user=alice command=DELE argument=slow-held\.bin", messages[2]), messages
        assert d.alive()
        gate.touch()
        assert d.proc.wait(timeout=10) == 0, d.log()
        a.close()
    finally:
        gate.touch()
        d.stop()
        notify.close()
