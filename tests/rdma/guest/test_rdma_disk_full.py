"""A full disk over RDMA, both ways: the daemon's root and the client's
destination are 8 MiB tmpfs mounts. The sink preallocates the announced
size, so the transfer fails before any block moves, with the reason; no
file appears under the final name, and the daemon keeps serving."""

import subprocess

import pytest

from conftest import Daemon, rftp, url
from test_rdma_transfers import BLOCK, MiB, digest, write_pattern

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


# A later file of a row finds the disk full. The row is sent largest first
# (client/batch), so the first file fits and leaves too little room for the
# second. The second's blocks were granted ahead (docs/protocol.md, "Grants
# ahead"), so they may be filled before the sink's space reservation fails.
# The reservation cuts the partial back, and its journal must not count
# blocks that are gone: once there is room, -c makes the exact file.
ROW = {"first.bin": 5 * MiB, "second.bin": BLOCK + 1, "third.bin": MiB // 2}


def write_row(root):
    root.mkdir(parents=True, exist_ok=True)
    for seed, (name, size) in enumerate(ROW.items(), 31):
        write_pattern(root / name, size, seed)


def test_upload_row_whose_second_file_finds_the_disk_full(full_disk_daemon, device, tmp_path):
    d = full_disk_daemon
    name, addr = device
    src = tmp_path / "row"
    write_row(src)
    p, _ = rftp("-vv", "-j", "1", "--continue-on-error", "put", "-r", str(src), url(addr, "", port=PORT),
                check=False)
    assert p.returncode == 5, p.stderr[-3000:]
    assert "452" in p.stderr and "No space left on device" in p.stderr, p.stderr[-3000:]
    assert "event=rdma_control_received type=grant_ahead " in p.stderr, p.stderr[-3000:]
    landed = d.root / "row"
    assert not (landed / "second.bin").exists()
    for kept in ("first.bin", "third.bin"):
        assert digest(landed / kept) == digest(src / kept)
    # A sink that cannot take a file aborts its channel (docs/protocol.md):
    # the RSTR sent ahead is answered 503, and the row goes on over a new one.
    assert "sent ahead and not wanted: RSTR, answered 503" in p.stderr
    assert d.count(r"event=rdma_channel_up") == 2

    (landed / "first.bin").unlink()
    _, s = rftp("put", "-c", str(src / "second.bin"), url(addr, "row/second.bin", port=PORT))
    assert s["transport"] == "rdma" and digest(landed / "second.bin") == digest(src / "second.bin")


def test_download_row_whose_second_file_finds_the_disk_full(daemon, device, tmp_path):
    name, addr = device
    served = daemon.root / f"row-full-{name}"
    write_row(served)
    dest = small_tmpfs(tmp_path / "small")
    grants_ahead = r"event=rdma_control_received type=grant_ahead "
    grants_ahead_before = daemon.count(grants_ahead)
    try:
        p, _ = rftp("-vv", "-j", "1", "--continue-on-error", "get", "-r", url(addr, served.name) + "/",
                    str(dest), check=False)
        assert p.returncode == 6, p.stderr[-3000:]
        assert "No space left on device" in p.stderr, p.stderr[-3000:]
        assert daemon.count(grants_ahead) > grants_ahead_before
        landed = dest / served.name
        assert not (landed / "second.bin").exists()
        for kept in ("first.bin", "third.bin"):
            assert digest(landed / kept) == digest(served / kept)

        (landed / "first.bin").unlink()
        _, s = rftp("get", "-c", url(addr, f"{served.name}/second.bin"), str(landed / "second.bin"))
        assert s["transport"] == "rdma" and digest(landed / "second.bin") == digest(served / "second.bin")
    finally:
        subprocess.run(["umount", "-l", str(dest)], check=False)
