"""A disk with a bad stretch, over RDMA on each soft device (the TCP tests:
tests/e2e/test_failing_disk_io.py, whose failing_disk_fs.py mounts a FUSE
file system where reads and writes past an offset fail with EIO).

Whose disk failed decides the outcome, as over TCP. The server's: rftpd
answers 451 (local error in processing), rftp exits 8 and -c finishes the
file once the disk works again. rftp's own: exit 6, and rftpd saw only its
client break off (426). The channel's abort carries the failing side's
errno, which the other side must not take for its own."""

import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import Daemon, rftp, url, wait_for
from test_rdma_transfers import MiB, write_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from daemon_log import transfer_line  # noqa: E402
from failing_disk_fs import failing_io_mount, fuse_missing, heal, shrinking_mount  # noqa: E402

PORT = 2132
SIZE = 64 * MiB
BAD_FROM = 40 * MiB
LOCAL_ERROR = r"451 Requested action aborted: local error in processing: .*Input/output error"
FILE_CHANGED = r"451 Requested action aborted: the file changed while it was being sent: .*the file ended at byte"


def resumable_after(args, d, reply):
    """Runs rftp over RDMA: it exits 8 showing rftpd's reply and the -c
    command, and rftpd logged the transfer as failed with that reply."""
    p, s = rftp(*args, check=False)
    assert s["transport"] == "rdma", s
    assert p.returncode == 8, p.stderr
    assert re.search(reply, p.stderr), p.stderr
    assert f"resume with: rftp {args[0]} -c" in p.stderr, p.stderr
    line = transfer_line(d, "store" if args[0] == "put" else "retrieve")
    assert re.search(r"result=failed reason=\"" + reply, line), line
    return p


@pytest.fixture(autouse=True)
def fuse_here():
    """Not a skip: the lab kernel has FUSE (build-kernel.sh), and make test
    installs python3-fuse. Missing, the lab is broken."""
    assert not fuse_missing(), fuse_missing()


@pytest.mark.parametrize("direction", ["put", "get"])
def test_the_servers_failing_disk_is_451_and_c_finishes(device, tmp_path, direction):
    name, addr = device
    work, disk = tmp_path / "d", tmp_path / "disk"
    local = tmp_path / "local.bin"
    disk.mkdir()
    if direction == "put":
        write_pattern(local, SIZE, 51)
        args = ["put", "-P", "4", str(local), url(addr, "up.bin", port=PORT)]
        there = disk / "up.bin"
    else:
        write_pattern(disk / "there.bin", SIZE, 52)
        args = ["get", "-P", "4", url(addr, "there.bin", port=PORT), str(local)]
        there = disk / "there.bin"
    try:
        with failing_io_mount(disk, work / "alice", BAD_FROM):
            d = Daemon(work, [addr], port=PORT)
            try:
                resumable_after(args, d, LOCAL_ERROR)
                assert not (there if direction == "put" else local).exists()

                heal(disk)
                _, s = rftp(args[0], "-c", *args[1:])
                assert s["transport"] == "rdma", s
                assert local.read_bytes() == there.read_bytes()
                assert d.alive()
            finally:
                d.stop()
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight


@pytest.mark.parametrize("direction", ["put", "get"])
def test_rftps_failing_disk_is_its_own_error_and_the_server_says_426(device, daemon, tmp_path, direction):
    name, addr = device
    disk = tmp_path / "disk"
    disk.mkdir()
    remote = f"io-{name}-{direction}.bin"
    try:
        with failing_io_mount(disk, tmp_path / "mnt", BAD_FROM) as mnt:
            verb = "store" if direction == "put" else "retrieve"
            aborted = rf"event=transfer direction={verb} path=/{remote} .*reason=\"426 "
            before = daemon.count(aborted)
            if direction == "put":
                write_pattern(disk / "src.bin", SIZE, 53)
                p, s = rftp("put", "-P", "4", str(mnt / "src.bin"), url(addr, remote), check=False)
                what = r"read at offset \d+: Input/output error"
            else:
                write_pattern(daemon.root / remote, SIZE, 54)
                p, s = rftp("get", "-P", "4", url(addr, remote), str(mnt / "down.bin"), check=False)
                what = r"write at offset \d+: Input/output error"
            assert s["transport"] == "rdma", s
            assert p.returncode == 6, p.stderr
            assert re.search(what, p.stderr), p.stderr
            wait_for(lambda: daemon.count(aborted) > before, 30, "rftpd's 426 in its log")
            assert not (disk / "down.bin").exists() and (direction == "get" or not (daemon.root / remote).exists())
    finally:
        (daemon.root / remote).unlink(missing_ok=True)
        shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_file_cut_short_while_sent_is_a_changed_file(device, tmp_path):
    """Someone truncates the file rftpd is sending over RDMA: its reply says
    the file changed, and its abort's status is an errno the peer accepts
    (rftp's own code for a changed file is not one); -c then fetches the
    file whole as it now is. (Until 2026-11-25 rftp exited 6 here, taking
    the server's read for its own disk's.)"""
    name, addr = device
    work, disk = tmp_path / "d", tmp_path / "disk"
    local = tmp_path / "local.bin"
    disk.mkdir()
    write_pattern(disk / "there.bin", SIZE, 55)
    args = ["get", "-P", "4", url(addr, "there.bin", port=PORT), str(local)]
    try:
        with shrinking_mount(disk, work / "alice", BAD_FROM):
            d = Daemon(work, [addr], port=PORT)
            try:
                p = resumable_after(args, d, FILE_CHANGED)
                assert "is not 0 or a negative errno" not in p.stderr, p.stderr
                _, s = rftp(args[0], "-c", *args[1:])
                assert s["transport"] == "rdma", s
                assert local.stat().st_size == BAD_FROM
                assert local.read_bytes() == (disk / "there.bin").read_bytes()
            finally:
                d.stop()
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight
