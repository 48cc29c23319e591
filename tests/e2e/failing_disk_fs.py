"""A file system over a failing disk, in one of two ways:

- It loses writes (failing_sync_mount): every fsync and fdatasync fails
  with EIO, as on a disk whose writeback failed (or a network file system
  that lost its server). With a delay, each sync first leaves a marker file
  beside the backing directory and then takes that long to fail, as a sync
  to a dying disk does: time for something else (an ABOR, a Ctrl-C) to
  happen meanwhile.
- It has bad sectors (failing_io_mount): every read and write that reaches
  at or past a byte offset fails with EIO, while a marker file beside the
  backing directory says so; heal() removes it, as a replaced disk or a
  remounted share would, so a resumed transfer can finish.
- Its files shrink (shrinking_mount): a read that reaches past a byte
  offset first cuts the file there (the backing file itself), as someone
  truncating it in the middle of a transfer would. No disk fails.
- It reads slowly (slow_reading_mount): every read takes as long as it
  would at a given rate, as on a slow or busy disk. No disk fails.

Everything else passes through to a directory beneath. It runs as a real
FUSE mount, so rftp and rftpd meet the failure where they would on a
failing disk, in the kernel's answer to their own sync, read or write.

The mount runs under Debian's /usr/bin/python3 (python3-fuse lives there,
whatever python runs pytest); the *_mount() functions are the tests' side."""

import contextlib
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

SYSTEM_PYTHON = "/usr/bin/python3"


def fuse_missing() -> str:
    """Why a FUSE mount cannot be made here, or "" when it can."""
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    if not shutil.which("fusermount") and not shutil.which("fusermount3"):
        return "no fusermount (package fuse3)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import fuse"], capture_output=True)
    if probe.returncode != 0:
        return "no python3-fuse for " + SYSTEM_PYTHON
    return ""


def sync_began_marker(backing: Path) -> Path:
    """The file a slow sync leaves before it fails (failing_sync_mount's sync_delay)."""
    return backing.parent / f"{backing.name}.sync-began"


def io_fails_marker(backing: Path) -> Path:
    """While this file exists, failing_io_mount's reads and writes past its offset fail."""
    return backing.parent / f"{backing.name}.io-fails"


def heal(backing: Path):
    """The disk under failing_io_mount works again from now on."""
    io_fails_marker(backing).unlink(missing_ok=True)


@contextlib.contextmanager
def failing_sync_mount(backing: Path, mount: Path, sync_delay: float = 0.0):
    """Mounts the file system whose syncs fail over backing at mount for the
    block. sync_delay: seconds each sync takes to fail, after leaving
    sync_began_marker(backing)."""
    with _mount(backing, mount, FAILING_SYNC="1", FAILING_SYNC_DELAY=str(sync_delay),
                FAILING_SYNC_MARKER=str(sync_began_marker(backing))) as m:
        yield m


@contextlib.contextmanager
def failing_io_mount(backing: Path, mount: Path, fails_from: int):
    """Mounts the file system whose reads and writes at or past byte
    fails_from of any file fail with EIO, until heal(backing). Syncs work."""
    io_fails_marker(backing).touch()
    with _mount(backing, mount, FAILING_IO_FROM=str(fails_from), FAILING_IO_MARKER=str(io_fails_marker(backing))) as m:
        yield m


@contextlib.contextmanager
def shrinking_mount(backing: Path, mount: Path, at: int):
    """Mounts the file system whose files are cut to `at` bytes when a read
    reaches past it."""
    with _mount(backing, mount, SHRINK_AT=str(at)) as m:
        yield m


@contextlib.contextmanager
def plain_mount(backing: Path, mount: Path):
    """Mounts the file system with nothing to fail: one without user extended
    attributes (this FUSE server has none), as NFSv3 is."""
    with _mount(backing, mount) as m:
        yield m


@contextlib.contextmanager
def rewriting_mount(backing: Path, mount: Path, at: int):
    """Mounts the file system whose files have their last 4 KiB written over
    (the size kept, the modification time new) when a read first reaches
    past `at`: a writer at work on a file while it is sent. Attributes are
    not cached, so fstat through the mount sees the new time at once."""
    with _mount(backing, mount, options="attr_timeout=0", REWRITE_AT=str(at)) as m:
        yield m


@contextlib.contextmanager
def slow_reading_mount(backing: Path, mount: Path, bytes_per_second: int):
    """Mounts the file system whose reads take as long as they would at
    bytes_per_second (at most; the mount itself adds some)."""
    # big_writes: without it every write is a 4 KiB call into this Python
    # process, slow enough on its own to blur the rate being set here.
    with _mount(backing, mount, options="big_writes", SLOW_READ_BPS=str(bytes_per_second)) as m:
        yield m


@contextlib.contextmanager
def _mount(backing: Path, mount: Path, options: str = "", **env):
    backing.mkdir(parents=True, exist_ok=True)
    mount.mkdir(parents=True, exist_ok=True)
    # Its messages go to a file: a pipe nobody reads while it serves would
    # block it once full.
    log = backing.parent / f"{backing.name}.fuse.log"
    # hard_remove: an unlinked file still open goes at once, instead of
    # lingering as .fuse_hidden* until its last descriptor closes.
    with open(log, "wb") as err:
        mount_options = ",".join([f"root={backing}", "hard_remove", *([options] if options else [])])
        proc = subprocess.Popen([SYSTEM_PYTHON, __file__, str(mount), "-f", "-o", mount_options],
                                stdout=subprocess.DEVNULL, stderr=err, env=dict(os.environ, **env))
    try:
        deadline = time.monotonic() + 10
        while not os.path.ismount(mount):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the failing file system did not mount: " + log.read_text(errors="replace"))
            time.sleep(0.05)
        yield mount
    finally:
        unmount = shutil.which("fusermount") or shutil.which("fusermount3")
        subprocess.run([unmount, "-u", "-z", str(mount)], capture_output=True)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve():
    import errno
    import fuse
    fuse.fuse_python_api = (0, 2)

    class OpenFile:
        def __init__(self, fd):
            self.fd = fd

    io_fails_from = int(os.environ.get("FAILING_IO_FROM", "-1"))
    shrink_at = int(os.environ.get("SHRINK_AT", "-1"))
    rewrite_at = int(os.environ.get("REWRITE_AT", "-1"))
    rewritten = set()
    slow_read_bps = int(os.environ.get("SLOW_READ_BPS", "0"))
    one_read_at_a_time = threading.Lock()

    def bad_sector(offset, size):
        return 0 <= io_fails_from < offset + size and os.path.exists(os.environ["FAILING_IO_MARKER"])

    class FailingDisk(fuse.Fuse):
        root = "/"

        def _at(self, path):
            return os.path.join(self.root, path.lstrip("/"))

        # The backing directory's files take no O_DIRECT from here: FUSE hands
        # over buffered I/O, and the failures to test are this file system's.
        def open(self, path, flags):
            return OpenFile(os.open(self._at(path), flags & ~os.O_DIRECT))

        def create(self, path, flags, mode):
            return OpenFile(os.open(self._at(path), (flags & ~os.O_DIRECT) | os.O_CREAT, mode))

        def fsync(self, path, datasync, fh):
            if not os.environ.get("FAILING_SYNC"):
                os.fsync(fh.fd)
                return 0
            delay = float(os.environ.get("FAILING_SYNC_DELAY", "0"))
            if delay:
                Path(os.environ["FAILING_SYNC_MARKER"]).touch()
                time.sleep(delay)
            return -errno.EIO

        def fallocate(self, path, mode, offset, length, fh):
            return -errno.EOPNOTSUPP

        def read(self, path, size, offset, fh):
            if bad_sector(offset, size):
                return -errno.EIO
            if 0 <= shrink_at < offset + size and os.fstat(fh.fd).st_size > shrink_at:
                os.truncate(self._at(path), shrink_at)  # by path: fh.fd may be read-only
            if 0 <= rewrite_at < offset + size and path not in rewritten:
                rewritten.add(path)
                with open(self._at(path), "r+b") as f:  # by path, as above
                    f.seek(-4096, os.SEEK_END)
                    f.write(os.urandom(4096))
            if slow_read_bps > 0:
                with one_read_at_a_time:  # the kernel's readahead asks for several at once
                    time.sleep(size / slow_read_bps)
            return os.pread(fh.fd, size, offset)

        def write(self, path, buf, offset, fh):
            if bad_sector(offset, len(buf)):
                return -errno.EIO
            return os.pwrite(fh.fd, buf, offset)

        def release(self, path, flags, fh):
            os.close(fh.fd)

        def ftruncate(self, path, size, fh):
            os.ftruncate(fh.fd, size)

        def truncate(self, path, size):
            os.truncate(self._at(path), size)

        def getattr(self, path):
            return os.lstat(self._at(path))

        def readdir(self, path, offset):
            for name in [".", "..", *os.listdir(self._at(path))]:
                yield fuse.Direntry(name)

        def unlink(self, path):
            os.unlink(self._at(path))

        def rename(self, old, new):
            os.rename(self._at(old), self._at(new))

        def mkdir(self, path, mode):
            os.mkdir(self._at(path), mode)

        def rmdir(self, path):
            os.rmdir(self._at(path))

        def chmod(self, path, mode):
            os.chmod(self._at(path), mode)

        def utimens(self, path, atime, mtime):
            os.utime(self._at(path), ns=(atime.tv_sec * 10**9 + atime.tv_nsec, mtime.tv_sec * 10**9 + mtime.tv_nsec))

        def statfs(self):
            return os.statvfs(self.root)

    fs = FailingDisk(dash_s_do="setsingle")
    fs.parser.add_option(mountopt="root", metavar="PATH", default="/")
    fs.parse(values=fs, errex=1)
    fs.main()


if __name__ == "__main__":
    sys.exit(serve())
