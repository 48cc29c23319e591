"""What ships reads no test-only switch (middleware/test_switches.h). The
test builds in build/testing/, which the other tests run, damage blocks
when RFTP_TEST_FLIP_BLOCKS says so; rftpd and rftp as `make install`
installs them move the same file whole both ways, nothing damaged and
nothing sent again, whatever the environment says."""

import os
import shutil
import subprocess

import pytest

from conftest import BUILD, TESTING, Rftpd
from test_client_rftpd import MiB, env, random_file, sha256, url  # noqa: F401 (env is a fixture)
from test_tcp_integrity import FLIP, mismatches

SWITCHES = {FLIP: "1000", "RFTP_TEST_CHECKPOINT_MS": "1", "RFTP_TEST_RDMA_CONNECT_FROM": "1"}


def installed(tmp_path):
    """rftpd and rftp installed from this build, as `make install` does."""
    dest = tmp_path / "root"
    r = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", "/usr"], env=dict(os.environ, DESTDIR=str(dest)),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return dest / "usr/sbin/rftpd", dest / "usr/bin/rftp"


def run(program, env, *args):
    return subprocess.run([str(program), "--no-progress", *args], env=dict(env, **SWITCHES), capture_output=True,
                          text=True, timeout=300)


@pytest.mark.skipif(not shutil.which("cmake") or not (BUILD / "cmake_install.cmake").exists(),
                    reason="needs cmake and a cmake build directory")
def test_the_installed_binaries_ignore_the_test_switches(tmp_path, env):
    rftpd, rftp = installed(tmp_path)
    src = random_file(tmp_path / "src.bin", 4 * MiB + 1)
    d = Rftpd(tmp_path / "installed", env_extra=SWITCHES, program=rftpd)
    try:
        up = run(rftp, env, "put", "-P", "2", "--block-size", "1M", str(src), url(d, "up.bin"))
        assert up.returncode == 0, up.stderr
        down = run(rftp, env, "get", "-P", "2", "--block-size", "1M", url(d, "up.bin"), str(tmp_path / "down.bin"))
        assert down.returncode == 0, down.stderr
        assert mismatches(d.log()) == [], d.log()[-3000:]
        assert "sent again" not in up.stderr + down.stderr
        assert sha256(tmp_path / "down.bin") == sha256(d.roots["alice"] / "up.bin") == sha256(src)
        # The test build, with the same switch, damages every block it sends:
        # the check above is one that can fail.
        damaged = run(TESTING / "rftp", env, "put", "-P", "2", "--block-size", "1M", str(src), url(d, "bad.bin"))
        assert damaged.returncode == 8, damaged.stderr
        assert "failed its CRC32C check 4 times" in damaged.stderr
    finally:
        alive = d.alive()
        assert d.stop() == 0 and alive, d.log()[-3000:]
