"""A full disk on the daemon's side, over TCP (one stream and framed
parallel streams): the upload ends with a clear error (452 from the daemon,
exit 5 from rftp with the server's reason), nothing appears under the final
name, and the daemon goes on serving. The user's root is a 4 MiB tmpfs;
mounting one needs root, so elsewhere this module is skipped, loudly."""

import re
import subprocess

import pytest

from conftest import Rftpd
from test_client_rftpd import MiB, env, random_file, rftp, sha256, url  # noqa: F401 (env is a fixture)


@pytest.fixture
def small_disk_daemon(tmp_path):
    root = tmp_path / "d" / "alice"
    root.mkdir(parents=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(root)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"SKIPPED: cannot mount a small tmpfs here ({mounted.stderr.strip()}); the disk-full tests need root")
    d = Rftpd(tmp_path / "d")
    try:
        yield d
    finally:
        alive = d.alive()
        code = d.stop()
        subprocess.run(["umount", "-l", str(root)], check=False)
        assert alive and code == 0, d.log()


@pytest.mark.parametrize("streams", [1, 4])
def test_upload_to_a_full_disk_fails_clearly_and_keeps_serving(small_disk_daemon, env, tmp_path, streams):
    d = small_disk_daemon
    src = random_file(tmp_path / "big.bin", 16 * MiB)
    r = rftp(env, "--json", "--no-progress", "put", "-P", str(streams), str(src), url(d, "big.bin"))
    err = r.stderr.decode()
    assert r.returncode == 5, err  # the server refused: its reason, not our broken pipe
    assert "452" in err and "storage" in err.lower(), err
    assert re.search(r"event=transfer direction=store path=/big.bin .*result=failed reason=\"452 Insufficient storage space",
                     d.log()), d.log()[-2000:]
    assert not (d.roots["alice"] / "big.bin").exists()
    # Still serving: a listing works, and once the partial is gone a small file fits.
    for partial in d.roots["alice"].glob(".big.bin*"):
        partial.unlink()
    small = random_file(tmp_path / "small.bin", 64 * 1024)
    assert rftp(env, "put", "-P", str(streams), str(small), url(d, "small.bin")).returncode == 0
    assert sha256(d.roots["alice"] / "small.bin") == sha256(small)
    ls = rftp(env, "ls", url(d))
    assert ls.returncode == 0 and b"small.bin" in ls.stdout
