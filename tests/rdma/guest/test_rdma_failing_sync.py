"""A disk that loses writes, over RDMA on each soft device (the TCP tests:
tests/e2e/test_failing_sync.py, whose failing_disk_fs.py mounts a FUSE file
system where every fsync fails). The resume journal's first checkpoint
finds it and stops the transfer there, on either side: the partial and its
journal go, nothing lands under the final name, and the daemon goes on
serving."""

import re
import shutil
import sys
from pathlib import Path

import pytest

from conftest import Daemon, rftp, url
from test_rdma_transfers import MiB, write_pattern

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from daemon_log import transfer_line  # noqa: E402
from failing_disk_fs import failing_sync_mount, fuse_missing  # noqa: E402
from power_loss import FAST_CHECKPOINTS  # noqa: E402

PORT = 2130
SIZE = 256 * MiB


@pytest.fixture(autouse=True)
def fuse_here():
    """Not a skip: the lab kernel has FUSE (build-kernel.sh), and make test
    installs python3-fuse. Missing, the lab is broken."""
    assert not fuse_missing(), fuse_missing()


def test_a_failed_sync_stops_an_upload(device, tmp_path):
    name, addr = device
    work, disk = tmp_path / "d", tmp_path / "disk"
    src = tmp_path / "up.bin"
    write_pattern(src, SIZE, 41)
    try:
        with failing_sync_mount(disk, work / "alice"):
            d = Daemon(work, [addr], port=PORT, env_extra=FAST_CHECKPOINTS)
            try:
                p, s = rftp("put", "-P", "4", str(src), url(addr, "up.bin", port=PORT), check=False)
                assert p.returncode == 8, p.stderr
                assert s["transport"] == "rdma", s
                # The daemon's reply as it logged it: rftp may have given up
                # waiting for it and said only that the transfer stopped.
                line = transfer_line(d, "store")
                assert re.search(r"result=failed reason=\"451 Could not flush the upload to disk: .*"
                                 r"the partial file was discarded", line), line
                # Stopped at the failed checkpoint, not at the end of the file.
                assert int(re.search(r" bytes=(\d+)", line)[1]) < SIZE // 2, line
                assert list(disk.iterdir()) == []
                rftp("ls", url(addr, "", port=PORT))  # still serving
                assert d.alive()
            finally:
                d.stop()
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)  # guest memory is tight


def test_a_failed_sync_stops_a_download(device, tmp_path):
    name, addr = device
    d = Daemon(tmp_path / "d", [addr], port=PORT)
    disk = tmp_path / "disk"
    try:
        write_pattern(d.root / "down.bin", SIZE, 42)
        with failing_sync_mount(disk, tmp_path / "mnt") as mnt:
            p, s = rftp("get", "-P", "4", url(addr, "down.bin", port=PORT), str(mnt / "down.bin"),
                        check=False, env_extra=FAST_CHECKPOINTS)
            assert p.returncode == 6, p.stderr
            assert re.search(r"fsync .*down\.bin\.rftp-part: .*the partial file was discarded", p.stderr), p.stderr
            assert s["transport"] == "rdma" and s["bytes"] < SIZE // 2, s
            assert list(disk.iterdir()) == []
        assert "result=ok" not in transfer_line(d, "retrieve")  # the daemon saw it stop
        rftp("get", url(addr, "down.bin", port=PORT), "/dev/null")  # and serves the next session
        assert d.alive()
    finally:
        d.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)
