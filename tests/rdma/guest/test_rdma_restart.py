"""`systemctl restart rftpd` in the middle of an RDMA transfer, on each soft
device (over TCP: tests/e2e/test_daemon_restart.py). SIGTERM while RDMA
WRITEs are in flight: rftpd tears the channel down and exits 0, with the cut
transfer's line in its log; rftp exits 3 with the 421 and prints the -c
command; a new rftpd on the same roots finishes the file over RDMA, moving at
most the rest.

A crash (SIGKILL) instead: no 421 comes, the channel just breaks (a peer
gone, work requests flushed), and rftp exits 8, the code of a broken
transfer, with the -c command; it must not take the flushed WRITEs for a
failure of its own disk (exit 6, as it did until 2026-11-25)."""

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PASSWORD, TESTING, Daemon, bound, rftp, url
from test_rdma_transfers import MiB, digest, write_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from restart import cut_by_a_restart, journal_prefix  # noqa: E402

PORT = 2131
SIZE = 256 * MiB


@pytest.mark.parametrize("how", ["restart", "crash"])
@pytest.mark.parametrize("direction", ["put", "get"])
def test_a_restart_or_crash_mid_rdma_transfer_is_resumed_by_c(device, tmp_path, direction, how):
    name, addr = device
    work = tmp_path / "d"
    d = Daemon(work, [addr], port=PORT)
    d2 = None
    try:
        if direction == "put":
            src = tmp_path / "w.bin"
            write_pattern(src, SIZE, 41)
            final, part, journal = d.root / "w.bin", d.root / ".w.bin.rftp-part", d.root / ".w.bin.rftp-resume"
            args = ["put", str(src), url(addr, "w.bin", port=PORT)]
        else:
            src = d.root / "r.bin"
            write_pattern(src, SIZE, 42)
            final = tmp_path / "r.bin"
            part, journal = Path(f"{final}.rftp-part"), Path(f"{final}.rftp-resume")
            args = ["get", url(addr, "r.bin", port=PORT), str(final)]
        env = dict(os.environ, RFTP_PASSWORD=PASSWORD)
        d, code, err = cut_by_a_restart(
            d, lambda _: subprocess.Popen([str(TESTING / "rftp"), "--no-progress", args[0], "-P", "4", *args[1:]],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True),
            lambda: Daemon(work, [addr], port=PORT), journal, final, SIZE,
            sig=signal.SIGTERM if how == "restart" else signal.SIGKILL)
        d.proc.wait(timeout=bound(20))
        if how == "restart":
            assert d.proc.returncode == 0, d.log()[-3000:]
            log = d.log()
            assert code == 3, err
            assert "421 Service shutting down." in err, err
            verb = "store" if direction == "put" else "retrieve"
            assert re.search(rf"event=transfer direction={verb} \S+ transport=rdma .*result=aborted", log), log[-3000:]
        else:
            assert code == 8, err
        assert f"resume with: rftp {direction} -c" in err, err
        assert part.exists() and journal.exists() and not final.exists()
        kept = journal_prefix(journal)
        assert 0 < kept < SIZE

        d2 = Daemon(work, [addr], port=PORT)  # the restart: same roots, a new process
        _, s = rftp(args[0], "-c", "-P", "4", *args[1:])
        assert s["transport"] == "rdma" and s["bytes"] <= SIZE - kept, s
        assert digest(final) == digest(src)
        assert not part.exists() and not journal.exists()
    finally:
        for daemon in (d, d2):
            if daemon:
                daemon.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight
