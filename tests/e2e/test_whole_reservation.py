"""A framed transfer whose size is known reserves the destination's space
with the file's whole size at once, so no write extends the file (on ext4 a
direct write past the end waits for every other one). The resume journal,
not the partial file's size, then says what arrived: whoever is killed
mid-way, daemon or client, the partial has its full size and a journal, and
a resume starts at the journal's prefix and ends with the file whole."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import Rftpd
from test_client_rftpd import RFTP, MiB, env, journal_prefix, random_file, rftp, sha256, summary, url  # noqa: F401

SIZE = 256 * MiB


def vouches_for_part(journal: Path) -> bool:
    return 0 < journal_prefix(journal) < SIZE


def stop_mid_transfer(proc, victim_pid: int, part: Path, journal: Path, limit=60, ready=vouches_for_part):
    """Freezes victim_pid as soon as ready(journal) (by default: the journal
    vouches for part of the file, not all of it), notes the partial's size
    and the journal's prefix, and kills it. Returns (size, prefix), or None
    if the transfer ended first."""
    seen = None
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        if ready(journal):
            os.kill(victim_pid, signal.SIGSTOP)
            seen = (part.stat().st_size, journal_prefix(journal))
            os.kill(victim_pid, signal.SIGKILL)
            break
        time.sleep(0.001)
    proc.wait(timeout=60)
    return seen


def on_a_file_system_that_preallocates(directory: Path):
    probe = directory / ".probe"
    with open(probe, "wb") as f:
        try:
            os.posix_fallocate(f.fileno(), 0, MiB)
        except OSError:
            pytest.skip("SKIPPED: this file system does not preallocate")
    probe.unlink()


def kill_daemon_mid_upload(d, name: str, upload_command, env=None, ready=vouches_for_part) -> tuple:
    """Starts upload_command (argv, in env) against rftpd d, up to three times, and
    kills the daemon while the upload of name is under way (once
    ready(journal)); returns the partial's size and the journal's prefix at
    that moment."""
    root = d.roots["alice"]
    part, journal = root / f".{name}.rftp-part", root / f".{name}.rftp-resume"
    seen = None
    try:
        for _attempt in range(3):
            proc = subprocess.Popen(upload_command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            seen = stop_mid_transfer(proc, d.proc.pid, part, journal, ready=ready)
            if seen:
                break
            (root / name).unlink()
    finally:
        if d.alive():
            d.proc.kill()
        d.proc.wait()
    assert seen, "the daemon was never caught mid-upload"
    return seen


def kill_client_mid_download(get_args, env, dst: Path, ready=vouches_for_part) -> tuple:
    """Runs rftp get get_args... dst, up to three times, and kills it while
    the download is under way (once ready(journal)); returns the partial's
    size and the journal's prefix at that moment."""
    part, journal = Path(str(dst) + ".rftp-part"), Path(str(dst) + ".rftp-resume")
    for _attempt in range(3):
        proc = subprocess.Popen([RFTP, "get", *map(str, get_args), str(dst)], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        seen = stop_mid_transfer(proc, proc.pid, part, journal, ready=ready)
        if seen:
            return seen
        dst.unlink()
    raise AssertionError("the client was never caught mid-download")


@pytest.mark.parametrize("streams", [1, 4])
def test_daemon_killed_mid_upload_resumes_from_its_journal(tmp_path, env, streams):
    work = tmp_path / "daemon"
    d = Rftpd(work)
    root = d.roots["alice"]
    on_a_file_system_that_preallocates(root)
    src = random_file(tmp_path / "w.bin", SIZE)
    part, journal = root / ".w.bin.rftp-part", root / ".w.bin.rftp-resume"
    command = [RFTP, "put", "-P", str(streams), "--block-size", "1M", str(src), url(d, "w.bin")]
    size, prefix = kill_daemon_mid_upload(d, "w.bin", command, env)
    assert size == SIZE  # the whole size up front
    assert journal.exists() and not (root / "w.bin").exists()
    assert part.read_bytes()[:prefix] == src.read_bytes()[:prefix]

    again = Rftpd(work)  # the same root, as after a restart
    try:
        r = rftp(env, "--json", "put", "-c", "-P", str(streams), "--block-size", "1M", str(src), url(again, "w.bin"))
        assert r.returncode == 0, r.stderr
        assert summary(r)["bytes"] == SIZE - prefix  # resumed at the journal's prefix
        assert sha256(root / "w.bin") == sha256(src)
        assert sorted(p.name for p in root.iterdir()) == ["w.bin"]
    finally:
        again.stop()


@pytest.mark.parametrize("streams", [1, 4])
def test_client_killed_mid_download_resumes_from_its_journal(rftpd, env, tmp_path, streams):
    on_a_file_system_that_preallocates(tmp_path)
    src = random_file(rftpd.roots["alice"] / "r.bin", SIZE)
    dst = tmp_path / "r.bin"
    part, journal = Path(str(dst) + ".rftp-part"), Path(str(dst) + ".rftp-resume")
    size, prefix = kill_client_mid_download(["-P", streams, "--block-size", "1M", url(rftpd, "r.bin")], env, dst)
    assert size == SIZE
    assert journal.exists() and not dst.exists()

    r = rftp(env, "--json", "get", "-c", "-P", str(streams), "--block-size", "1M", url(rftpd, "r.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE - prefix
    assert sha256(dst) == sha256(src)
    assert not part.exists() and not journal.exists()

