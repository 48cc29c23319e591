"""Files on every alignment boundary, and a sparse file of several GiB, over
TCP (one stream and four framed parallel streams), with the daemon's root and
the client's files on the machine's own disk and on tmpfs, compared by digest.
The daemon's transfer log says how its disk engine split each file between
O_DIRECT and buffered I/O, and how much it sent from the page cache; both
are checked byte for byte.
The RDMA side of the same matrix runs in the lab (tests/rdma/guest/test_rdma_file_sizes.py)."""

import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from sparse_file import SPARSE_SIZE, sparse_digest, write_sparse  # noqa: E402
from conftest import Rftpd, on_tmpfs
from test_client_rftpd import env, rftp, sha256, summary, url  # noqa: F401 (env is a fixture)

MiB = 1 << 20
BLOCK = MiB  # --block-size below
SIZES = [0, 1, 4095, 4096, 4097, BLOCK - 1, BLOCK, BLOCK + 1]


@pytest.fixture
def daemon_on(place):
    d = Rftpd(place / "rftpd")
    yield d
    alive = d.alive()
    assert d.stop() == 0 and alive, d.log()[-3000:]


def transfer_line(daemon, direction: str, name: str) -> str:
    """The daemon's one transfer line for that file in that direction."""
    lines = [line for line in daemon.log().splitlines()
             if f"event=transfer direction={direction} " in line and re.search(rf'path="?/{re.escape(name)}"? ', line)]
    assert len(lines) == 1, f"{len(lines)} {direction} lines for {name}:\n{daemon.log()[-3000:]}"
    return lines[0]


def disk_split(daemon, direction: str, name: str):
    """(direct_bytes, buffered_bytes, buffered_reason) from the daemon's
    transfer line for that file; None for a plain stream sent by sendfile
    (no disk engine involved)."""
    line = transfer_line(daemon, direction, name)
    if direction == "retrieve" and " streams=0 " in line:
        return None
    m = re.search(r'direct_bytes=(\d+) buffered_bytes=(\d+)(?: buffered_reason="([^"]*)")?', line)
    assert m, line
    return int(m[1]), int(m[2]), m[3] or ""


def sendfile_bytes(daemon, name: str) -> int:
    """Bytes of that file's download that rftpd sent from the page cache."""
    m = re.search(r" sendfile_bytes=(\d+)", transfer_line(daemon, "retrieve", name))
    return int(m[1]) if m else 0


def takes_direct_io(directory: Path) -> bool:
    """tmpfs refuses O_DIRECT before Linux 6.6 and takes it after."""
    probe = directory / ".direct-probe"
    probe.write_bytes(b"")
    try:
        os.close(os.open(probe, os.O_RDONLY | os.O_DIRECT))
        return True
    except OSError:
        return False
    finally:
        probe.unlink()


def expected_split(direct: bool, size: int) -> tuple:
    """Blocks of 1 MiB start aligned: each one's whole 4 KiB sectors go
    direct where the file system takes O_DIRECT, its tail buffered."""
    if not direct:
        return 0, size
    return size // 4096 * 4096, size % 4096


@pytest.mark.parametrize("streams", [1, 4])
def test_boundary_sizes_round_trip(daemon_on, place, env, streams):
    src_dir = place / "src"
    src_dir.mkdir()
    back_dir = place / "back"
    back_dir.mkdir()
    for size in SIZES:
        src = src_dir / f"s{size}.bin"
        src.write_bytes(os.urandom(size))
        name = f"s{size}-{streams}.bin"
        r = rftp(env, "--json", "put", "-P", str(streams), "--block-size", "1M", str(src), url(daemon_on, name))
        assert r.returncode == 0, r.stderr
        assert summary(r)["bytes"] == size
        assert sha256(daemon_on.roots["alice"] / name) == sha256(src), name
        # rftp uploads to rftpd framed even on one stream, so the daemon's
        # disk engine writes every upload: O_DIRECT where the file system
        # takes it, except on tmpfs, where that is the same copy into memory.
        direct = takes_direct_io(daemon_on.roots["alice"]) and not on_tmpfs(place)
        stored = disk_split(daemon_on, "store", name)
        assert stored[:2] == expected_split(direct, size), name
        if on_tmpfs(place):
            assert stored[2] == "in memory (tmpfs)", (name, stored)
        back = back_dir / name
        r = rftp(env, "--json", "get", "-P", str(streams), "--block-size", "1M", url(daemon_on, name), str(back))
        assert r.returncode == 0, r.stderr
        assert sha256(back) == sha256(src), name
        # Downloads from rftpd are framed too. On disk its disk engine reads
        # every one of them; on tmpfs it sends each block from the page cache.
        if on_tmpfs(place):
            split = disk_split(daemon_on, "retrieve", name)
            assert split == (0, size, "in memory (tmpfs): sent from the page cache"), (name, split)
            assert sendfile_bytes(daemon_on, name) == size, name
        else:
            assert disk_split(daemon_on, "retrieve", name)[:2] == expected_split(direct, size), name
            assert sendfile_bytes(daemon_on, name) == 0, name


def test_several_gib_sparse_file_on_disk(rftpd, env, tmp_path):
    src = tmp_path / "sparse.bin"
    write_sparse(src)
    want = sparse_digest()
    r = rftp(env, "--json", "put", "-P", "4", str(src), url(rftpd, "sparse.bin"), timeout=600)
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SPARSE_SIZE
    stored = rftpd.roots["alice"] / "sparse.bin"
    assert sha256(stored) == want
    src.unlink()
    back = tmp_path / "back.bin"
    r = rftp(env, "--json", "get", "-P", "4", url(rftpd, "sparse.bin"), str(back), timeout=600)
    assert r.returncode == 0, r.stderr
    assert sha256(back) == want
    stored.unlink()
    back.unlink()


def test_direct_io_off_writes_everything_buffered(tmp_path, env):
    d = Rftpd(tmp_path / "buffered", extra_config="storage: {direct_io: false}\n")
    try:
        src = tmp_path / "b.bin"
        src.write_bytes(os.urandom(BLOCK + 1))
        r = rftp(env, "put", "-P", "4", "--block-size", "1M", str(src), url(d, "b.bin"))
        assert r.returncode == 0, r.stderr
        assert sha256(d.roots["alice"] / "b.bin") == sha256(src)
        assert disk_split(d, "store", "b.bin") == (0, BLOCK + 1, "direct I/O is off")
        back = tmp_path / "back.bin"
        assert rftp(env, "get", "-P", "4", "--block-size", "1M", url(d, "b.bin"), str(back)).returncode == 0
        assert sha256(back) == sha256(src)
        assert disk_split(d, "retrieve", "b.bin") == (0, BLOCK + 1, "direct I/O is off")
        # Read buffered anyway, so sent from the page cache.
        assert sendfile_bytes(d, "b.bin") == BLOCK + 1
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]
