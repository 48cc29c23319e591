"""A full disk over RDMA, both ways: the daemon's root and the client's
destination are 8 MiB tmpfs mounts. The sink preallocates the announced
size, so the transfer fails before any block moves, with the reason; no
file appears under the final name, and the daemon keeps serving."""

import subprocess

import pytest

from conftest import Daemon, rftp, url
from test_rdma_transfers import BLOCK, digest, write_pattern

PORT = 2125


def small_tmpfs(path):
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(path)], check=True)
    return path


@pytest.fixture
def full_disk_daemon(tmp_path_factory, device):
    work = tmp_path_factory.mktemp(f"full-{device[0]}")
    root = small_tmpfs(work / "alice")
    d = Daemon(work, [device[1]], port=PORT)
    yield d
    alive = d.alive()
    code = d.stop()
    subprocess.run(["umount", "-l", str(root)], check=False)
    assert alive and code == 0, d.log()[-3000:]


def test_upload_to_a_full_disk(full_disk_daemon, device, tmp_path):
    d = full_disk_daemon
    name, addr = device
    src = tmp_path / "big.bin"
    write_pattern(src, 4 * BLOCK, 21)
    p, _ = rftp("put", str(src), url(addr, "big.bin", port=PORT), check=False)
    assert p.returncode == 5, p.stderr  # the server refused, with its reason
    assert "452" in p.stderr and "No space left on device" in p.stderr, p.stderr
    assert not (d.root / "big.bin").exists()
    assert "transport=rdma" in d.log()
    for partial in d.root.glob(".big.bin*"):
        partial.unlink()
    small = tmp_path / "small.bin"
    write_pattern(small, BLOCK + 1, 22)
    _, s = rftp("put", str(small), url(addr, "small.bin", port=PORT))
    assert s["transport"] == "rdma" and digest(d.root / "small.bin") == digest(small)


def test_download_to_a_full_disk(daemon, device, tmp_path):
    name, addr = device
    served = daemon.root / f"for-full-{name}.bin"
    write_pattern(served, 4 * BLOCK, 23)
    dest = small_tmpfs(tmp_path / "small")
    try:
        p, _ = rftp("get", url(addr, served.name), str(dest / "big.bin"), check=False)
        assert p.returncode == 6, p.stderr  # a local file error
        assert "No space left on device" in p.stderr, p.stderr
        assert not (dest / "big.bin").exists()
    finally:
        subprocess.run(["umount", "-l", str(dest)], check=False)
        served.unlink()
