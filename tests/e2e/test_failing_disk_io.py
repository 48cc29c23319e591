"""The server's disk fails under a transfer: its reads or writes past some
byte give EIO (a real FUSE file system with a bad stretch, failing_disk_fs.py),
met by rftpd's disk engine where it would meet a dying disk. rftpd answers
451 (RFC 959: "local error in processing"; not 426, which says the data
connection broke), logs it so, and serves on; rftp shows that reply, exits 8
and prints the -c command; nothing lands under the final name; and once the
disk works again, that command moves the rest and the file is whole.

Two neighbours of that case: rftp's own disk failing (exit 6; rftpd saw
only its client break off, 426), and a file cut short while rftpd sends it
(someone truncated it: the reply says the file changed, not the disk)."""

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, Rftpd
from daemon_log import transfer_line
from failing_disk_fs import failing_io_mount, fuse_missing, heal, rewriting_mount, shrinking_mount
from test_client_rftpd import RFTP, MiB, env, random_file, rftp, url  # noqa: F401 (env: a fixture)
from test_stream_journal import login
from vsftpd_server import VSFTPD, VsftpdServer

SIZE = 64 * MiB
BAD_FROM = 40 * MiB  # where the disk's bad stretch starts, in every file

pytestmark = pytest.mark.skipif(bool(fuse_missing()), reason=f"SKIPPED: {fuse_missing()}")

LOCAL_ERROR = r"451 Requested action aborted: local error in processing: .*Input/output error"
FILE_CHANGED = r"451 Requested action aborted: the file changed while it was being sent: .*the file ended at byte \d+"


def assert_resumable_after(r, d, direction, reply):
    """rftp exited 8 showing rftpd's reply and the -c command, and rftpd
    logged the transfer as failed with that reply."""
    err = r.stderr.decode()
    assert r.returncode == 8, err
    assert re.search(reply, err), err
    assert f"resume with: rftp {direction} -c" in err, err
    line = transfer_line(d, "store" if direction == "put" else "retrieve")
    assert re.search(r"result=failed reason=\"" + reply, line), line


@pytest.fixture(scope="module", autouse=True)
def fuse_mounts(tmp_path_factory):
    """Skips where this machine lets nobody mount FUSE (a container without
    the right), found by trying once."""
    probe = tmp_path_factory.mktemp("fuse-probe")
    try:
        with failing_io_mount(probe / "disk", probe / "mnt", 0):
            pass
    except RuntimeError as e:
        pytest.skip(f"SKIPPED: {e}")


@pytest.mark.parametrize("streams", [1, 4])
def test_a_failing_write_on_the_server_is_451_and_c_finishes_the_upload(tmp_path, env, streams):
    src = random_file(tmp_path / "src.bin", SIZE)
    work, disk = tmp_path / "d", tmp_path / "disk"
    with failing_io_mount(disk, work / "alice", BAD_FROM):
        d = Rftpd(work)
        try:
            r = rftp(env, "put", "-P", str(streams), str(src), url(d, "up.bin"))
            assert_resumable_after(r, d, "put", LOCAL_ERROR)
            assert not (disk / "up.bin").exists()
            assert "up.bin" not in login(d).nlst()  # still serving

            heal(disk)
            r = rftp(env, "put", "-c", "-P", str(streams), str(src), url(d, "up.bin"))
            assert r.returncode == 0, r.stderr.decode()
            assert (disk / "up.bin").read_bytes() == src.read_bytes()
        finally:
            d.stop()


@pytest.mark.parametrize("streams", [1, 4])
def test_a_failing_read_on_the_server_is_451_and_c_finishes_the_download(tmp_path, env, streams):
    work, disk = tmp_path / "d", tmp_path / "disk"
    dest = tmp_path / "down.bin"
    disk.mkdir()
    src = random_file(disk / "there.bin", SIZE)
    with failing_io_mount(disk, work / "alice", BAD_FROM):
        d = Rftpd(work)
        try:
            r = rftp(env, "get", "-P", str(streams), url(d, "there.bin"), str(dest))
            assert_resumable_after(r, d, "get", LOCAL_ERROR)
            assert not dest.exists()
            assert login(d).nlst() == ["there.bin"]  # still serving

            heal(disk)
            r = rftp(env, "get", "-c", "-P", str(streams), url(d, "there.bin"), str(dest))
            assert r.returncode == 0, r.stderr.decode()
            assert dest.read_bytes() == src.read_bytes()
        finally:
            d.stop()


@pytest.mark.parametrize("direction", ["put", "get"])
def test_a_failing_local_disk_is_rftps_own_error_and_the_server_says_426(tmp_path, env, rftpd, direction):
    """The other way round: rftp's own disk fails (reading what it sends, or
    writing what it receives). That is a local file error (exit 6), and for
    rftpd only the client broke off: 426, not the 451 of its own disk."""
    disk = tmp_path / "disk"
    disk.mkdir()
    with failing_io_mount(disk, tmp_path / "mnt", BAD_FROM) as mnt:
        if direction == "put":
            random_file(disk / "src.bin", SIZE)
            r = rftp(env, "put", "-P", "4", str(mnt / "src.bin"), url(rftpd, "up.bin"))
            verb, what = "store", r"read at offset \d+: Input/output error"
        else:
            random_file(rftpd.roots["alice"] / "there.bin", SIZE)
            r = rftp(env, "get", "-P", "4", url(rftpd, "there.bin"), str(mnt / "down.bin"))
            verb, what = "retrieve", r"write at offset \d+: Input/output error"
        err = r.stderr.decode()
        assert r.returncode == 6, err
        assert re.search(what, err), err
        line = transfer_line(rftpd, verb)
        assert re.search(r"result=(failed|aborted) reason=\"426 ", line), line
        assert not (disk / "down.bin").exists() and "up.bin" not in login(rftpd).nlst()


@pytest.mark.parametrize("verify", [False, True])
def test_a_local_file_written_to_while_put_sends_it_is_exit_7(tmp_path, env, rftpd, verify):
    """Someone writes to the file rftp is sending, its size the same: the
    copy may mix old bytes and new, and a digest of the bytes as they went
    would agree with it. rftp exits 7 and leaves no such copy on the server,
    under the final name or (with --verify, held aside) as its partial."""
    disk = tmp_path / "disk"
    disk.mkdir()
    random_file(disk / "src.bin", SIZE)
    # Written an hour ago: the write during the transfer must not fall in
    # the same tick of the file system's clock as the file's making.
    os.utime(disk / "src.bin", (time.time() - 3600, time.time() - 3600))
    with rewriting_mount(disk, tmp_path / "mnt", BAD_FROM) as mnt:
        r = rftp(env, "put", "-P", "4", *(["--verify"] if verify else []), str(mnt / "src.bin"),
                 url(rftpd, "up.bin"))
    err = r.stderr.decode()
    assert r.returncode == 7, err
    assert "was written to while rftp sent it" in err, err
    assert not [n for n in os.listdir(rftpd.roots["alice"]) if "up.bin" in n], os.listdir(rftpd.roots["alice"])


@pytest.mark.parametrize("streams", [1, 4])
def test_a_file_cut_short_while_sent_is_a_changed_file_not_a_failed_disk(tmp_path, env, streams):
    """Someone truncates the file rftpd is sending. Its reply says the file
    changed (451, but not "local error": no disk failed), rftp exits 8 with
    the -c command, and -c finds the file's new size and fetches it whole
    as it now is."""
    work, disk = tmp_path / "d", tmp_path / "disk"
    dest = tmp_path / "down.bin"
    disk.mkdir()
    random_file(disk / "there.bin", SIZE)
    with shrinking_mount(disk, work / "alice", BAD_FROM):
        d = Rftpd(work)
        try:
            r = rftp(env, "get", "-P", str(streams), url(d, "there.bin"), str(dest))
            assert_resumable_after(r, d, "get", FILE_CHANGED)
            assert not dest.exists()

            r = rftp(env, "get", "-c", "-P", str(streams), url(d, "there.bin"), str(dest))
            assert r.returncode == 0, r.stderr.decode()
            assert dest.stat().st_size == BAD_FROM
            assert dest.read_bytes() == (disk / "there.bin").read_bytes()
        finally:
            d.stop()


def test_a_file_cut_short_under_a_plain_stream_is_a_changed_file_too(tmp_path):
    """curl's one plain stream, which rftpd sends with sendfile: the same reply."""
    curl = shutil.which("curl")
    if not curl:
        pytest.skip("SKIPPED: curl is not installed")
    work, disk = tmp_path / "d", tmp_path / "disk"
    disk.mkdir()
    random_file(disk / "there.bin", SIZE)
    with shrinking_mount(disk, work / "alice", BAD_FROM):
        d = Rftpd(work)
        try:
            r = subprocess.run([curl, "-sS", "-o", str(tmp_path / "down.bin"),
                                f"ftp://alice:{PASSWORDS['alice']}@127.0.0.1:{d.port}/there.bin"],
                               capture_output=True, timeout=120)
            assert r.returncode != 0, r.stderr
            line = transfer_line(d, "retrieve")
            assert re.search(r"result=failed reason=\"" + FILE_CHANGED, line), line
        finally:
            d.stop()


@pytest.mark.parametrize("streams", [1, 4])
def test_a_local_file_cut_short_while_put_sends_it_is_exit_7(tmp_path, env, rftpd, streams):
    """The file rftp is sending shrinks: what arrived is not the file the
    user asked for (exit 7), and no server reply turns it into a broken
    transfer (8)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    random_file(disk / "src.bin", SIZE)
    with shrinking_mount(disk, tmp_path / "mnt", BAD_FROM) as mnt:
        r = rftp(env, "put", "-P", str(streams), str(mnt / "src.bin"), url(rftpd, f"up{streams}.bin"))
    err = r.stderr.decode()
    assert r.returncode == 7, err
    assert re.search(r"the file ended at byte \d+ before its announced size", err), err
    assert f"up{streams}.bin" not in login(rftpd).nlst()


@pytest.mark.skipif(not Path(VSFTPD).exists() or os.geteuid() != 0, reason="SKIPPED: needs vsftpd, run as root")
def test_a_local_file_cut_short_while_put_sends_it_to_a_plain_server_is_removed_there(tmp_path):
    """A plain FTP server stores whatever one stream brought under the final
    name. The file rftp sends shrinks: exit 7, and rftp removes the short file
    it left there (DELE), so nobody takes it for the user's file."""
    disk, anon = tmp_path / "disk", tmp_path / "anon"
    disk.mkdir()
    anon.mkdir()
    random_file(disk / "src.bin", SIZE)
    server = VsftpdServer(anon).start()
    try:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}  # anonymous
        with shrinking_mount(disk, tmp_path / "mnt", BAD_FROM) as mnt:
            r = subprocess.run([RFTP, "put", str(mnt / "src.bin"), server.url()], env=env, capture_output=True,
                               timeout=120)
        err = r.stderr.decode()
        assert r.returncode == 7, err
        assert re.search(r"the file ended at byte \d+ before its announced size", err), err
        assert "rftp removed" in err, err
        assert not (server.pub / "src.bin").exists()
    finally:
        server.stop()
