"""A resume point that survives a power loss, over RDMA on each soft device
(the TCP tests: tests/e2e/test_power_loss_resume.py, whose power_loss.py
plays the loss: the journal naming another boot, the bytes after its last
checkpoint zeroed). The process is frozen once a checkpoint has synced part
of the file, then killed; the resume starts at the durable prefix, over
RDMA, and ends with the file whole."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import PASSWORD, TESTING, Daemon, bound, rftp, url
from test_rdma_transfers import MiB, digest, write_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from power_loss import FAST_CHECKPOINTS, lose_power, synced_part_way  # noqa: E402

PORT = 2129
SIZE = 256 * MiB


def freeze_then_kill(victim: subprocess.Popen, runner: subprocess.Popen, journal: Path) -> bool:
    """Kills victim once a checkpoint synced part of the file; False if runner ended first."""
    ready = synced_part_way(SIZE)
    deadline = time.monotonic() + bound(120)
    while runner.poll() is None and time.monotonic() < deadline:
        if ready(journal):
            victim.send_signal(signal.SIGSTOP)
            victim.kill()
            victim.wait(timeout=bound(30))
            return True
        time.sleep(0.001)
    return False


def start_rftp(*args, env_extra=None):
    env = dict(os.environ, RFTP_PASSWORD=PASSWORD, **(env_extra or {}))
    return subprocess.Popen([str(TESTING / "rftp"), "--no-progress", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


def test_download_resumes_from_its_durable_prefix(device, tmp_path):
    name, addr = device
    d = Daemon(tmp_path / "d", [addr], port=PORT)
    try:
        src = d.root / "r.bin"
        write_pattern(src, SIZE, 31)
        dst = tmp_path / "r.bin"
        part, journal = Path(f"{dst}.rftp-part"), Path(f"{dst}.rftp-resume")
        for _attempt in range(3):
            client = start_rftp("get", "-P", "4", url(addr, "r.bin", port=PORT), str(dst), env_extra=FAST_CHECKPOINTS)
            caught = freeze_then_kill(client, client, journal)
            client.wait(timeout=bound(60))
            if caught:
                break
            dst.unlink(missing_ok=True)
        assert caught, "the download was never caught after a checkpoint"
        durable = lose_power(part, journal)
        _, s = rftp("get", "-c", "-P", "4", url(addr, "r.bin", port=PORT), str(dst))
        assert s["transport"] == "rdma" and s["bytes"] == SIZE - durable, s
        assert digest(dst) == digest(src)
        assert not part.exists() and not journal.exists()
    finally:
        d.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight


def test_upload_resumes_from_its_durable_prefix(device, tmp_path):
    name, addr = device
    work = tmp_path / "d"
    src = tmp_path / "w.bin"
    write_pattern(src, SIZE, 32)
    d = Daemon(work, [addr], port=PORT, env_extra=FAST_CHECKPOINTS)
    part, journal = d.root / ".w.bin.rftp-part", d.root / ".w.bin.rftp-resume"
    caught = False
    try:
        for _attempt in range(3):
            client = start_rftp("put", "-P", "4", str(src), url(addr, "w.bin", port=PORT))
            caught = freeze_then_kill(d.proc, client, journal)
            if caught:
                break
            client.wait(timeout=bound(60))
            (d.root / "w.bin").unlink(missing_ok=True)
        assert caught, "the upload was never caught after a checkpoint"
        client.wait(timeout=bound(120))  # its daemon is gone
    finally:
        d.stop()
        if not caught:
            shutil.rmtree(tmp_path, ignore_errors=True)
    durable = lose_power(part, journal)
    again = Daemon(work, [addr], port=PORT)  # the same root, as after the machine came back
    try:
        _, s = rftp("put", "-c", "-P", "4", str(src), url(addr, "w.bin", port=PORT))
        assert s["transport"] == "rdma" and s["bytes"] == SIZE - durable, s
        assert digest(again.root / "w.bin") == digest(src)
        assert sorted(p.name for p in again.root.iterdir()) == ["w.bin"]
    finally:
        again.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight
