"""rftpd and rftp on a machine without RDMA (this host): nothing offered,
nothing broken. The RDMA paths themselves are tested in the lab guest
(tests/rdma/)."""

import ftplib
import os
import subprocess

import pytest

from conftest import PASSWORDS, TESTING

RFTP = str(TESTING / "rftp")


def host_has_rdma() -> bool:
    return os.path.isdir("/sys/class/infiniband") and bool(os.listdir("/sys/class/infiniband"))


pytestmark = pytest.mark.skipif(host_has_rdma(), reason="this host has an RDMA device")


def login(d):
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=10)
    f.login("alice", PASSWORDS["alice"])
    return f


def test_daemon_offers_no_rdma_and_says_why(rftpd):
    assert "event=rdma state=off" in rftpd.log() and "no RDMA device" in rftpd.log()
    f = login(rftpd)
    assert "RDMA" not in f.sendcmd("FEAT")
    with pytest.raises(ftplib.error_perm, match="^502"):
        f.sendcmd("RADR 4 4194304 8")
    with pytest.raises(ftplib.error_perm, match="^503"):
        f.sendcmd("RSTR x.bin")
    (rftpd.roots["alice"] / "r.bin").write_bytes(b"r")
    with pytest.raises(ftplib.error_perm, match="^503"):
        f.sendcmd("RRTR r.bin")
    assert "RDMA totals: channels=0 queue_pairs=0 pinned_bytes=0" in f.sendcmd("STAT")
    f.quit()


def test_radr_needs_login(rftpd):
    f = ftplib.FTP()
    f.connect("127.0.0.1", rftpd.port, timeout=10)
    with pytest.raises(ftplib.error_perm, match="^530"):
        f.sendcmd("RADR 1 1048576 1")
    f.close()


def run(d, tmp_path, *args):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(100000))
    env = dict(os.environ, RFTP_PASSWORD=PASSWORDS["alice"], HOME=str(tmp_path))
    return subprocess.run([RFTP, *args, "put", str(src), f"rftp://alice@127.0.0.1:{d.port}/dst.bin"], env=env,
                          capture_output=True, text=True, timeout=60)


def test_client_uses_tcp_quietly_without_a_device(rftpd, tmp_path):
    r = run(rftpd, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "using TCP" not in r.stderr  # the normal case on such a machine: no noise
    r = run(rftpd, tmp_path, "-v")
    assert "no RDMA device on this machine; using TCP" in r.stderr


def test_transport_rdma_fails_with_exit_3(rftpd, tmp_path):
    r = run(rftpd, tmp_path, "--transport", "rdma")
    assert r.returncode == 3, r.stderr
    assert "RDMA unavailable: no RDMA device on this machine" in r.stderr
    assert not (rftpd.roots["alice"] / "dst.bin").exists()
