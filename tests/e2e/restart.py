"""`systemctl restart rftpd` in the middle of a transfer, played: SIGTERM once
the resume journal vouches for part of the file. Shared by the TCP tests here
(test_daemon_restart.py) and the RDMA lab's (tests/rdma/guest/
test_rdma_restart.py); imports nothing of either's conftest."""

import signal
import subprocess
import time
from pathlib import Path

from power_loss import journal_fields


def journal_prefix(journal: Path) -> int:
    """The complete prefix a resume journal vouches for (0 while it has none)."""
    fields = journal_fields(journal)
    return fields[0] if fields else 0


def stop_mid_transfer(daemon, proc: subprocess.Popen, journal: Path, size: int, limit=120, sig=signal.SIGTERM):
    """Signals the daemon (SIGTERM: a restart; SIGKILL: a crash) as soon as
    the journal vouches for part of the file; returns rftp's (exit status,
    stderr), or None if it ended first."""
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        if 0 < journal_prefix(journal) < size:
            daemon.proc.send_signal(sig)
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                raise AssertionError("rftp did not end within 60 s of its server's stop")
            return proc.returncode, err
        time.sleep(0.001)
    proc.communicate(timeout=limit)
    return None


def cut_by_a_restart(daemon, start_rftp, new_daemon, journal: Path, final: Path, size: int, sig=signal.SIGTERM):
    """Runs start_rftp(daemon) (a Popen with text stderr) and stops the daemon
    mid-transfer with sig, up to three times: a file whole before the signal
    came is removed and tried again with new_daemon(). Returns (the stopped
    daemon, rftp's exit status, its stderr). A daemon it started is stopped
    if it fails."""
    first = daemon
    try:
        for _attempt in range(3):
            cut = stop_mid_transfer(daemon, start_rftp(daemon), journal, size, sig=sig)
            if cut and cut[0] != 0:
                return daemon, cut[0], cut[1]
            final.unlink(missing_ok=True)
            if cut:  # stopped all the same
                daemon.proc.wait(timeout=20)
                daemon.stop()
                daemon = new_daemon()
        raise AssertionError("rftpd was never stopped mid-transfer")
    except BaseException:
        if daemon is not first and daemon.alive():
            daemon.stop()
        raise
