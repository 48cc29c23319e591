"""A full disk on the daemon's side, over TCP (one stream and framed
parallel streams): the upload ends with a clear error (452 from the daemon,
exit 5 from rftp with the server's reason), nothing appears under the final
name, and the daemon goes on serving. rftp announces every framed upload's
size (ALLO), so rftpd refuses it before a byte moves; a plain client's
upload, which announces nothing, runs into the full disk on the way. A
download to a full local disk fails before a byte moves (exit 6). The disks
are 4 MiB tmpfs mounts; mounting one needs root, so elsewhere this module is
skipped, loudly."""

import os
import re
import subprocess

import pytest

from conftest import PASSWORDS, Rftpd
from test_client_rftpd import MiB, env, random_file, rftp, sha256, url  # noqa: F401 (env is a fixture)


def mount_small_tmpfs(path):
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(path)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"SKIPPED: cannot mount a small tmpfs here ({mounted.stderr.strip()}); the disk-full tests need root")


def used_bytes(path) -> int:
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


@pytest.fixture
def small_disk_daemon(tmp_path):
    root = tmp_path / "d" / "alice"
    mount_small_tmpfs(root)
    d = Rftpd(tmp_path / "d")
    try:
        yield d
    finally:
        alive = d.alive()
        code = d.stop()
        subprocess.run(["umount", "-l", str(root)], check=False)
        assert alive and code == 0, d.log()


@pytest.mark.parametrize("streams", [1, 4])
@pytest.mark.parametrize("size_mib", [6, 16])  # below and above the size that asks SRCE too
def test_upload_to_a_full_disk_fails_clearly_and_keeps_serving(small_disk_daemon, env, tmp_path, streams, size_mib):
    d = small_disk_daemon
    src = random_file(tmp_path / "big.bin", size_mib * MiB)
    r = rftp(env, "--json", "--no-progress", "put", "-P", str(streams), str(src), url(d, "big.bin"))
    err = r.stderr.decode()
    assert r.returncode == 5, err  # the server refused: its reason, not our broken pipe
    assert "452" in err and "storage" in err.lower(), err
    assert re.search(r"event=transfer direction=store path=/big.bin .*result=failed reason=\"452 Insufficient storage space",
                     d.log()), d.log()[-2000:]
    assert not (d.roots["alice"] / "big.bin").exists()
    # Refused before the 150: no byte moved, and the failed reservation was
    # given back rather than left holding the disk.
    assert "no room for" in err, err
    assert re.search(r"event=transfer direction=store path=/big.bin .* bytes=0 .*result=failed", d.log())
    assert used_bytes(d.roots["alice"]) < 1 * MiB
    assert list(d.roots["alice"].iterdir()) == []  # not even an empty partial file
    assert_still_serving(d, env, tmp_path, streams)


def test_a_plain_upload_runs_into_the_full_disk_and_the_daemon_keeps_serving(small_disk_daemon, env, tmp_path):
    d = small_disk_daemon
    src = random_file(tmp_path / "big.bin", 6 * MiB)
    p = subprocess.run(["curl", "-sS", "--max-time", "30", "--user", f"alice:{PASSWORDS['alice']}", "-T", str(src),
                        f"ftp://127.0.0.1:{d.port}/big.bin"], capture_output=True, timeout=60)
    assert p.returncode != 0, "curl stored 6 MiB on a 4 MiB disk"
    assert re.search(r"event=transfer direction=store path=/big.bin .*result=failed reason=\"452 Insufficient storage space",
                     d.log()), d.log()[-2000:]
    assert not (d.roots["alice"] / "big.bin").exists()
    assert_still_serving(d, env, tmp_path, 1)


def assert_still_serving(d, env, tmp_path, streams):
    """A listing works, and once the partial is gone a small file fits."""
    for partial in d.roots["alice"].glob(".big.bin*"):
        partial.unlink()
    small = random_file(tmp_path / "small.bin", 64 * 1024)
    assert rftp(env, "put", "-P", str(streams), str(small), url(d, "small.bin")).returncode == 0
    assert sha256(d.roots["alice"] / "small.bin") == sha256(small)
    ls = rftp(env, "ls", url(d))
    assert ls.returncode == 0 and b"small.bin" in ls.stdout


def test_download_to_a_full_local_disk_fails_before_a_byte_moves(rftpd, env, tmp_path):
    local = tmp_path / "small-local"
    mount_small_tmpfs(local)
    try:
        random_file(rftpd.roots["alice"] / "big.bin", 6 * MiB)
        r = rftp(env, "--no-progress", "get", "--transport", "tcp", url(rftpd, "big.bin"), str(local / "big.bin"))
        err = r.stderr.decode()
        assert r.returncode == 6, err  # a local file problem
        assert "no room for" in err, err
        assert not (local / "big.bin").exists()
        assert used_bytes(local) < 1 * MiB
        assert re.search(r"event=transfer direction=retrieve", rftpd.log()) is None  # RETR was never sent
    finally:
        subprocess.run(["umount", "-l", str(local)], check=False)
