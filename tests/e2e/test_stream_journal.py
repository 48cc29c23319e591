"""One plain stream is journaled too. Its bytes arrive in order, but the
disk engine keeps several writes in flight and they finish in any order, so
a process killed mid-stream may leave a partial file whose size runs past a
block never written. The resume journal beside it says what is complete:
whoever is killed (rftpd under curl's plain STOR, rftp under a download
from vsftpd), the resume starts at the journal's prefix and the file ends
whole."""

import ftplib
import io
import os
import shutil
from pathlib import Path

import pytest

from conftest import PASSWORDS, Rftpd
from test_client_rftpd import RFTP, MiB, env, journal_prefix, random_file, rftp, sha256, summary  # noqa: F401
from test_whole_reservation import SIZE, kill_client_mid_download, kill_daemon_mid_upload
from vsftpd_server import VSFTPD, VsftpdServer
from test_durability import stop_traced


def daemon_killed_mid_plain_upload(tmp_path):
    """rftpd killed under curl's plain STOR of p.bin; returns (workdir, src,
    the journal's prefix), the partial and its journal left in the root."""
    curl = shutil.which("curl")
    if not curl:
        pytest.skip("SKIPPED: curl is not installed")
    work = tmp_path / "daemon"
    d = Rftpd(work)
    root = d.roots["alice"]
    src = random_file(tmp_path / "p.bin", SIZE)
    part, journal = root / ".p.bin.rftp-part", root / ".p.bin.rftp-resume"
    # curl's STOR is one plain stream: no OPTS PARALLEL, no framing.
    size, prefix = kill_daemon_mid_upload(d, "p.bin", [curl, "-sS", "--limit-rate", "100M", "-T", str(src),
                                                       f"ftp://alice:{PASSWORDS['alice']}@127.0.0.1:{d.port}/p.bin"])
    assert prefix <= size
    assert journal.exists() and not (root / "p.bin").exists()
    assert part.read_bytes()[:prefix] == src.read_bytes()[:prefix]
    return work, src, prefix


def login(d) -> ftplib.FTP:
    ftp = ftplib.FTP()
    ftp.connect("127.0.0.1", d.port, timeout=60)
    ftp.login("alice", PASSWORDS["alice"])
    return ftp


def test_daemon_killed_mid_plain_upload_resumes_from_its_journal(tmp_path):
    work, src, prefix = daemon_killed_mid_plain_upload(tmp_path)
    again = Rftpd(work)  # the same root, as after a restart
    root = again.roots["alice"]
    try:
        ftp = login(again)
        ftp.voidcmd("TYPE I")
        assert ftp.size(".p.bin.rftp-part") == prefix  # cut back to what the journal vouches for
        with open(src, "rb") as f:
            f.seek(prefix)
            ftp.storbinary("STOR p.bin", f, rest=prefix)
        ftp.quit()
        assert sha256(root / "p.bin") == sha256(src)
        assert sorted(p.name for p in root.iterdir()) == ["p.bin"]
    finally:
        again.stop()


def test_an_ascii_upload_continuing_a_journaled_partial_leaves_no_journal(tmp_path):
    """The journal of a killed binary upload stays until the file is whole;
    an ASCII upload that continues the partial keeps no journal of its own,
    and the one it continued from goes when it completes."""
    work, src, prefix = daemon_killed_mid_plain_upload(tmp_path)
    again = Rftpd(work)
    root = again.roots["alice"]
    try:
        ftp = login(again)
        ftp.voidcmd("TYPE A")
        ftp.sendcmd(f"REST {prefix}")
        ftp.storlines("STOR p.bin", io.BytesIO(b"the rest\r\nin lines\r\n"))
        ftp.quit()
        assert (root / "p.bin").read_bytes() == src.read_bytes()[:prefix] + b"the rest\nin lines\n"
        assert sorted(p.name for p in root.iterdir()) == ["p.bin"]
    finally:
        again.stop()


def test_deleting_a_partial_upload_deletes_its_journal(tmp_path):
    """A killed upload leaves its partial and journal, both hidden names.
    Deleting the partial (the user giving up on it) takes the journal too:
    left behind, it would keep the directory from being removed, unseen."""
    work, _, _ = daemon_killed_mid_plain_upload(tmp_path)
    again = Rftpd(work)
    root = again.roots["alice"]
    try:
        ftp = login(again)
        assert ftp.delete(".p.bin.rftp-part").startswith("250")
        ftp.quit()
        assert list(root.iterdir()) == []
    finally:
        again.stop()


@pytest.mark.skipif(not os.path.exists(VSFTPD) or os.geteuid() != 0, reason="vsftpd not available")
def test_client_killed_mid_plain_download_resumes_from_its_journal(tmp_path):
    anon = tmp_path / "anon"
    server = VsftpdServer(anon).start()
    try:
        src = random_file(server.pub / "s.bin", SIZE)
        home = tmp_path / "home"
        home.mkdir()
        client_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
        dst = tmp_path / "s.bin"
        part, journal = Path(str(dst) + ".rftp-part"), Path(str(dst) + ".rftp-resume")
        size, prefix = kill_client_mid_download([server.url("/pub/s.bin")], client_env, dst)
        assert prefix <= size
        assert journal.exists() and not dst.exists()
        assert part.read_bytes()[:prefix] == src.read_bytes()[:prefix]

        r = rftp(client_env, "--json", "get", "-c", server.url("/pub/s.bin"), str(dst))
        assert r.returncode == 0, r.stderr
        assert summary(r)["bytes"] == SIZE - prefix
        assert sha256(dst) == sha256(src)
        assert not part.exists() and not journal.exists()
    finally:
        server.stop()


@pytest.mark.skipif(shutil.which("strace") is None, reason="SKIPPED: strace is not installed")
def test_an_ascii_upload_keeps_no_journal(tmp_path):
    """ASCII is written in order by one thread, so its partial's size is its
    resume point; a journal would never move and would cut a resume back to
    the start. Seen from outside: rftpd never opens one."""
    trace = tmp_path / "trace.txt"
    d = Rftpd(tmp_path / "d", wrapper=("strace", "-f", "-qq", "-e", "trace=openat,openat2", "-o", str(trace)))
    try:
        ftp = ftplib.FTP()
        ftp.connect("127.0.0.1", d.port, timeout=60)
        ftp.login("alice", PASSWORDS["alice"])
        lines = b"".join(b"line %d\r\n" % i for i in range(20000))
        ftp.storlines("STOR a.txt", io.BytesIO(lines))
        ftp.quit()
        assert (d.roots["alice"] / "a.txt").read_bytes() == lines.replace(b"\r\n", b"\n")
    finally:
        stop_traced(d)
    opened = [l for l in trace.read_text().splitlines() if "openat" in l]
    assert any("a.txt.rftp-part" in l for l in opened), opened[-20:]  # the trace saw the upload
    assert not any("rftp-resume" in l for l in opened), [l for l in opened if "rftp-resume" in l]
