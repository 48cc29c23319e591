"""A file-system call that takes long (unlinking a large file frees its
blocks inside the call: 0.8 s for 6 GB on the bench machine's disk) runs off
rftpd's event loop: other sessions are answered meanwhile. The slowness is
played by an LD_PRELOAD shim (shims/slow_unlink.c) that makes unlinkat and
renameat of names starting with "slow-" take two seconds; the daemon, its
file system and its clients are real."""

import ftplib
import io
import shutil
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
    d = Rftpd(work, env_extra={"LD_PRELOAD": str(shim)})
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
