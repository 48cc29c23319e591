"""Files on every alignment boundary, and a sparse file of several GiB, over
TCP (one stream and four framed parallel streams), with the daemon's root and
the client's files on the machine's own disk and on tmpfs, compared by digest.
The RDMA side of the same matrix runs in the lab (tests/rdma/guest/test_rdma_file_sizes.py)."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from sparse_file import SPARSE_SIZE, write_sparse  # noqa: E402
from conftest import Rftpd
from test_client_rftpd import env, rftp, sha256, summary, url  # noqa: F401 (env is a fixture)

MiB = 1 << 20
BLOCK = MiB  # --block-size below
SIZES = [0, 1, 4095, 4096, 4097, BLOCK - 1, BLOCK, BLOCK + 1]


@pytest.fixture(params=["disk", "tmpfs"])
def place(request, tmp_path):
    """A scratch directory on the machine's disk (pytest's tmp) or on tmpfs."""
    if request.param == "disk":
        yield tmp_path
        return
    d = Path(tempfile.mkdtemp(prefix="rftp-sizes-", dir="/dev/shm"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def daemon_on(place):
    d = Rftpd(place / "rftpd")
    yield d
    alive = d.alive()
    assert d.stop() == 0 and alive, d.log()[-3000:]


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
        back = back_dir / name
        r = rftp(env, "--json", "get", "-P", str(streams), "--block-size", "1M", url(daemon_on, name), str(back))
        assert r.returncode == 0, r.stderr
        assert sha256(back) == sha256(src), name


def test_several_gib_sparse_file_on_disk(rftpd, env, tmp_path):
    src = tmp_path / "sparse.bin"
    write_sparse(src)
    want = sha256(src)
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
