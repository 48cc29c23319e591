"""rftpd at its thread limit: the daemon runs in a pids cgroup of its own
(what systemd's TasksMax= or a container's pids.max give it), and the limit is
lowered to what it has running, so the next thread it asks for is refused.

What must hold there: a login or a transfer that finds no thread is refused
with a reply that says so (421 for a login, 451 for a transfer, and the
session goes on; rftp shows that reply, whichever way the file went); an upload that has its thread finishes even when io_uring
cannot start a worker for its disk writes and the resume journal cannot start
its checkpoint thread; and once threads can be had again, everything works.

Needs root and the pids controller (cgroup v1 here, v2 where the machine has
it); skipped otherwise."""

import contextlib
import ftplib
import io
import os
import re
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, Rftpd
from test_client_rftpd import MiB, env, random_file, rftp, url  # noqa: F401 (env: a fixture)
from test_daemon_hostile import wait_for

TIMEOUT = 10
# rftpd's idle workers end after this long (daemon/server/background_tasks.h),
# and the count falls back to the daemon's own threads.
WORKER_LINGER_S = 5


def pids_hierarchy():
    """Where a pids cgroup can be made, or None."""
    if os.geteuid() != 0:
        return None
    v1 = Path("/sys/fs/cgroup/pids")
    if (v1 / "cgroup.procs").exists():
        return v1
    v2 = Path("/sys/fs/cgroup")
    try:
        if "pids" in (v2 / "cgroup.subtree_control").read_text().split():
            return v2
    except OSError:
        pass
    return None


class PidsCgroup:
    def __init__(self, path: Path):
        self.path = path

    def current(self) -> int:
        return int((self.path / "pids.current").read_text())

    def limit(self, n):
        (self.path / "pids.max").write_text(f"{n}\n")

    def wrapper(self):
        """Runs a command inside this cgroup (the shell joins it, then execs)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs")]


@contextlib.contextmanager
def daemon_in_pids_cgroup(workdir: Path, env_extra=None):
    hierarchy = pids_hierarchy()
    if hierarchy is None:
        pytest.skip("SKIPPED: needs root and the pids cgroup controller")
    cg = PidsCgroup(hierarchy / f"rftp-e2e-{os.getpid()}-{time.monotonic_ns()}")
    try:
        cg.path.mkdir()
    except OSError as e:  # a container's read-only cgroup file system
        pytest.skip(f"SKIPPED: cannot make a pids cgroup: {e}")
    try:
        d = Rftpd(workdir, wrapper=cg.wrapper(), env_extra=env_extra)
        try:
            yield d, cg
        finally:
            alive = d.alive()
            code = d.stop()
        assert alive, f"rftpd died at its thread limit:\n{d.log()}"
        assert code == 0, f"rftpd exited {code} on SIGTERM:\n{d.log()}"
    finally:
        # Empty once rftpd has been waited for; a moment for the kernel to
        # agree. Never raises: a test's own failure must not be hidden.
        end = time.monotonic() + TIMEOUT
        while not _removed(cg.path) and time.monotonic() < end:
            time.sleep(0.05)


def _removed(path: Path) -> bool:
    try:
        path.rmdir()
        return True
    except FileNotFoundError:
        return True
    except OSError:
        return False


def login(d) -> ftplib.FTP:
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=TIMEOUT)
    f.login("alice", PASSWORDS["alice"])
    return f


def at_rest(cg: PidsCgroup, threads: int):
    """Waits until the daemon is back to its own threads: no idle worker
    left to take the next task."""
    wait_for(lambda: cg.current() <= threads, "rftpd's idle workers to end", WORKER_LINGER_S + TIMEOUT, 0.1)


def test_a_login_without_a_thread_is_refused_with_421_and_the_next_one_works(tmp_path):
    with daemon_in_pids_cgroup(tmp_path / "d") as (d, cg):
        own = cg.current()
        cg.limit(own)
        f = ftplib.FTP()
        f.connect("127.0.0.1", d.port, timeout=TIMEOUT)
        with pytest.raises(ftplib.error_temp, match=r"^421 .*no thread or memory to spare"):
            f.login("alice", PASSWORDS["alice"])
        f.close()
        assert "event=thread_refused" in d.log()
        cg.limit("max")
        (d.roots["alice"] / "a.bin").write_bytes(data := os.urandom(300_000))
        f = login(d)
        got = bytearray()
        f.retrbinary("RETR a.bin", got.extend)
        assert bytes(got) == data
        f.quit()


def test_a_transfer_without_a_thread_gets_451_and_the_session_goes_on(tmp_path):
    with daemon_in_pids_cgroup(tmp_path / "d") as (d, cg):
        root = d.roots["alice"]
        (root / "a.bin").write_bytes(data := os.urandom(1 << 20))
        own = cg.current()
        f = login(d)
        at_rest(cg, own)
        cg.limit(own)
        with pytest.raises(ftplib.error_temp, match=r"^451 .*no thread or memory to spare"):
            f.retrbinary("RETR a.bin", lambda _: None)
        with pytest.raises(ftplib.error_temp, match=r"^451 .*no thread or memory to spare"):
            f.storbinary("STOR b.bin", io.BytesIO(os.urandom(100_000)))
        # Nothing under the upload's name, nor a partial of it.
        assert sorted(p.name for p in root.iterdir()) == ["a.bin"]
        assert f.voidcmd("NOOP").startswith("200")
        cg.limit("max")
        got = bytearray()
        f.retrbinary("RETR a.bin", got.extend)
        assert bytes(got) == data
        f.storbinary("STOR b.bin", io.BytesIO(data))
        assert (root / "b.bin").read_bytes() == data
        f.quit()


class Trickle(io.RawIOBase):
    """An upload that arrives a piece at a time, so rftpd writes each part
    of a block as it comes (a buffered write at an unaligned end) and the
    transfer outlasts the resume journal's checkpoint interval."""

    def __init__(self, data: bytes, piece: int, pause_s: float):
        self.data, self.piece, self.pause_s, self.at = data, piece, pause_s, 0

    def readable(self):
        return True

    def read(self, n=-1):
        if self.at >= len(self.data):
            return b""
        time.sleep(self.pause_s)
        chunk = self.data[self.at:self.at + self.piece]
        self.at += len(chunk)
        return chunk


def test_an_upload_at_the_thread_limit_finishes_without_io_uring_workers_or_checkpoints(tmp_path):
    """The transfer's own thread is the last one there is. io_uring cannot
    start a worker for a write that would block, and gives it up
    (-ECANCELED): on this machine's kernel the buffered parts of a trickling
    upload go that way, and before the disk engine did such a request itself
    the upload failed with 426 "write at offset 0: Operation canceled". The
    journal's checkpoint thread cannot start either: the upload goes on
    without checkpoints, with a warning."""
    with daemon_in_pids_cgroup(tmp_path / "d", env_extra={"RFTP_TEST_CHECKPOINT_MS": "200"}) as (d, cg):
        root = d.roots["alice"]
        data = os.urandom(40 * 65536 + 1234)
        own = cg.current()
        f = login(d)
        at_rest(cg, own)
        cg.limit(own + 1)
        reply = f.storbinary("STOR slow.bin", Trickle(data, 65536, 0.03), blocksize=65536)
        assert reply.startswith("226"), reply
        assert (root / "slow.bin").read_bytes() == data
        log = d.log()
        assert "event=resume_journal checkpoints=off" in log, log[-3000:]
        assert "Operation canceled" not in log, log[-3000:]
        assert sorted(p.name for p in root.iterdir()) == ["slow.bin"]
        cg.limit("max")
        got = bytearray()
        f.retrbinary("RETR slow.bin", got.extend)
        assert bytes(got) == data
        f.quit()


def test_rftp_streams_without_threads_show_the_servers_451_and_resume_later(tmp_path, env):
    """rftpd has the transfer's thread but none for its four streams. rftp
    says what the server said (451, no thread), for a put and for a get,
    where it used to say 426 "Connection closed" and, for a get, only that
    the data connection closed. Nothing is under a final name, and once
    threads can be had, -c finishes both files."""
    src = random_file(tmp_path / "src.bin", 12 * MiB + 5)
    with daemon_in_pids_cgroup(tmp_path / "d") as (d, cg):
        root = d.roots["alice"]
        (root / "there.bin").write_bytes(src.read_bytes())
        down = tmp_path / "down.bin"
        own = cg.current()
        at_rest(cg, own)
        for args, gone in ((["put", str(src), url(d, "up.bin")], root / "up.bin"),
                           (["get", url(d, "there.bin"), str(down)], down)):
            cg.limit(own + 1)
            r = rftp(env, args[0], "-P", "4", "--block-size", "1M", *args[1:])
            err = r.stderr.decode()
            assert r.returncode == 8, err
            assert re.search(r"451 Requested action aborted: stream \d/4: cannot start a thread: .*try again later", err), err
            assert not gone.exists()
            cg.limit("max")
            r = rftp(env, args[0], "-c", "-P", "4", "--block-size", "1M", *args[1:])
            assert r.returncode == 0, r.stderr.decode()
            assert gone.read_bytes() == src.read_bytes()
            at_rest(cg, own)
