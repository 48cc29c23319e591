"""Files on every alignment boundary over real RDMA on both devices, and a
sparse file of several GiB on one, between tmpfs and a real ext4 disk (the lab's
block device, where O_DIRECT works; tmpfs refuses it in the guest's 6.1
kernel), compared by digest. The engine's debug lines (event=disk_io) show
which bytes went direct and which went buffered, and why."""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from sparse_file import SPARSE_SIZE, sparse_digest, write_sparse  # noqa: E402
from conftest import Daemon, lab_devices, rftp, url
from test_rdma_transfers import BLOCK, digest

SIZES = [0, 1, 4095, 4096, 4097, BLOCK - 1, BLOCK, BLOCK + 1]
DISK_PORT = 2126


def lab_disk() -> Path:
    disk = os.environ.get("LAB_DISK")
    assert disk, "the lab boots with --disk (tests/rdma/run.sh); LAB_DISK is missing"
    return Path(disk)


@pytest.fixture(scope="module")
def disk_daemon():
    workdir = lab_disk() / "rftpd"
    workdir.mkdir()
    # Two readers and two writers per transfer (the default daemon has one
    # of each), so blocks also finish out of order between disk threads.
    d = Daemon(workdir, [a for _, a in lab_devices()], port=DISK_PORT,
               extra_config="storage: {readers: 2, writers: 2, queue_depth: 2}\n")
    yield d
    alive = d.alive()
    assert d.stop() == 0 and alive, d.log()[-3000:]


def disk_io(text: str, role: str):
    """(direct, buffered, reason) of every file a side moved with bytes in it."""
    out = []
    for m in re.finditer(rf"event=disk_io role={role} file=\d+ direct_bytes=(\d+) buffered_bytes=(\d+)"
                         r"(?: buffered_reason=\"([^\"]*)\")?", text):
        direct, buffered = int(m[1]), int(m[2])
        if direct + buffered:
            out.append((direct, buffered, m[3] or ""))
    return out


def aligned_split(size: int):
    """Blocks start on 4 KiB boundaries, so each block's tail under 4 KiB goes buffered."""
    direct = 0
    for at in range(0, size, BLOCK):
        n = min(BLOCK, size - at)
        direct += n - n % 4096
    return direct, size - direct


def write_files(d: Path):
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for size in SIZES:
        p = d / f"s{size}.bin"
        p.write_bytes(os.urandom(size))
        paths.append(p)
    return paths


def test_boundary_sizes_between_tmpfs_and_disk(daemon, disk_daemon, device, tmp_path):
    name, addr = device
    on_tmpfs = write_files(tmp_path / "src")
    nonempty = [p.stat().st_size for p in on_tmpfs if p.stat().st_size]
    remote = f"sizes-{name}"
    (disk_daemon.root / remote).mkdir()

    # tmpfs -> the daemon's disk: direct where aligned, buffered for each tail.
    mark = len(disk_daemon.log())
    rftp("put", "-j", "1", "-P", "2", *map(str, on_tmpfs), url(addr, remote, port=DISK_PORT) + "/")
    for p in on_tmpfs:
        assert digest(disk_daemon.root / remote / p.name) == digest(p), p.name
    stored = disk_io(disk_daemon.log()[mark:], "sink")
    assert sorted(s[:2] for s in stored) == sorted(aligned_split(n) for n in nonempty), stored

    # The daemon's disk -> a local disk directory: direct reads there, direct writes here.
    back = lab_disk() / f"back-{name}"
    back.mkdir()
    mark = len(disk_daemon.log())
    for p in on_tmpfs:
        proc, _ = rftp("-vv", "get", url(addr, f"{remote}/{p.name}", port=DISK_PORT), str(back / p.name))
        assert digest(back / p.name) == digest(p), p.name
        if p.stat().st_size:
            assert disk_io(proc.stderr, "sink") == [(*aligned_split(p.stat().st_size), "")], proc.stderr[-2000:]
    read = disk_io(disk_daemon.log()[mark:], "source")
    assert sorted(s[:2] for s in read) == sorted(aligned_split(n) for n in nonempty), read

    # The local disk -> the other daemon's tmpfs: the guest's tmpfs refuses
    # O_DIRECT, so everything goes buffered, and the log says why.
    (daemon.root / remote).mkdir()
    mark = len(daemon.log())
    rftp("put", "-j", "1", *map(str, sorted(back.iterdir())), url(addr, remote) + "/")
    for p in on_tmpfs:
        assert digest(daemon.root / remote / p.name) == digest(p), p.name
    to_tmpfs = disk_io(daemon.log()[mark:], "sink")
    assert sorted(s[:2] for s in to_tmpfs) == sorted((0, n) for n in nonempty), to_tmpfs
    assert all("O_DIRECT refused" in s[2] for s in to_tmpfs), to_tmpfs
    for p in back.iterdir():
        p.unlink()
    back.rmdir()


@pytest.mark.first_guest
def test_several_gib_sparse_file_up_and_down_on_disk(disk_daemon):
    # Offsets past 2^32 are the engine's arithmetic, the same on either
    # device, and the test takes 80 s: it runs on whichever device the
    # guest has, in the guest whose own tests take less time (conftest.py).
    # Split in two, the upload in one guest and the download in the other,
    # the halves took 61 and 68 s, side by side.
    name, addr = lab_devices()[0]
    src = lab_disk() / f"sparse-{name}.bin"
    write_sparse(src)
    want = sparse_digest()
    try:
        # --verify: both sides take the digest as the blocks pass, through
        # the daemon's two disk threads.
        p, up = rftp("-vv", "put", "--verify", "-P", "4", str(src), url(addr, src.name, port=DISK_PORT), timeout=600)
        assert "was taken during the transfer" in p.stderr, p.stderr[-2000:]
        assert up["transport"] == "rdma" and up["bytes"] == SPARSE_SIZE
        stored = disk_daemon.root / src.name
        assert digest(stored) == want
        back = lab_disk() / f"sparse-back-{name}.bin"
        p, down = rftp("-vv", "get", "--verify", "-P", "4", url(addr, src.name, port=DISK_PORT), str(back), timeout=600)
        assert "was taken during the transfer" in p.stderr, p.stderr[-2000:]
        assert down["transport"] == "rdma" and down["bytes"] == SPARSE_SIZE
        assert digest(back) == want
    finally:
        for p in (src, disk_daemon.root / src.name, lab_disk() / f"sparse-back-{name}.bin"):
            p.unlink(missing_ok=True)
