"""rftp -c continues a partial file only while its source is the one it
began from: a file rewritten in place since (same size, new content, new
modification time) is sent anew, never completed into a mix of its old
beginning and its new end. A download keeps the remote file's identity on
its partial file; an upload names the local file's to rftpd (SRCE), which
keeps it on its partial and shows it in MLST."""

import ftplib
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, Rftpd, on_a_file_system_with_user_xattrs
from failing_disk_fs import fuse_missing, plain_mount, slow_reading_mount
from test_client_rftpd import RFTP, MiB, env, random_file, rftp, sha256, summary, url  # noqa: F401
from test_whole_reservation import SIZE, kill_client_mid_download, stop_mid_transfer

from source_identity import source_token  # (tests/common, on the path test_client_rftpd sets)


def test_a_remote_file_rewritten_since_the_partial_download_is_fetched_anew(rftpd, env, tmp_path):
    on_a_file_system_with_user_xattrs(tmp_path)
    remote = random_file(rftpd.roots["alice"] / "v.bin", SIZE)
    dst = tmp_path / "v.bin"
    _, prefix = kill_client_mid_download(["-P", "2", "--block-size", "1M", url(rftpd, "v.bin")], env, dst)
    assert prefix > 0

    # Same size, new content, a later modification time.
    random_file(remote, SIZE)
    later = time.time() + 60
    os.utime(remote, (later, later))

    r = rftp(env, "--json", "-v", "get", "-c", "-P", "2", "--block-size", "1M", url(rftpd, "v.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE  # all of it again: nothing of the old version kept
    assert sha256(dst) == sha256(remote)
    assert any("earlier version of the remote file" in n for n in summary(r).get("notes", [])), summary(r)


@pytest.mark.skipif(bool(fuse_missing()), reason=f"SKIPPED: {fuse_missing()}")
def test_a_partial_download_where_nothing_records_its_version_says_what_that_risks(rftpd, env, tmp_path):
    """On a file system without user extended attributes (NFSv3, say) a
    partial download records no version of the remote file: -c can only
    trust its size, and says so, and that --verify would check the result."""
    remote = random_file(rftpd.roots["alice"] / "n.bin", 3 * MiB)
    with plain_mount(tmp_path / "backing", tmp_path / "nfs") as mnt:
        (mnt / "n.bin.rftp-part").write_bytes(remote.read_bytes()[:MiB])
        r = rftp(env, "--json", "get", "-c", "--block-size", "1M", url(rftpd, "n.bin"), str(mnt / "n.bin"))
        assert r.returncode == 0, r.stderr
        assert summary(r)["bytes"] == 2 * MiB
        assert any("keeps no record of the remote file's version" in n and "--verify" in n
                   for n in summary(r).get("notes", [])), summary(r)
        assert sha256(mnt / "n.bin") == sha256(remote)


def test_an_unchanged_remote_file_is_continued(rftpd, env, tmp_path):
    remote = random_file(rftpd.roots["alice"] / "u.bin", SIZE)
    dst = tmp_path / "u.bin"
    _, prefix = kill_client_mid_download(["-P", "2", "--block-size", "1M", url(rftpd, "u.bin")], env, dst)
    r = rftp(env, "--json", "get", "-c", "-P", "2", "--block-size", "1M", url(rftpd, "u.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE - prefix
    assert sha256(dst) == sha256(remote)
    assert os.listxattr(dst) == []  # the bookkeeping stays with the partial file


# ---- uploads: rftpd records the local file's identity (SRCE) on its partial


def mlst_source(d, name: str):
    """The X.rftp-source fact MLST gives for name, or None."""
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=10)
    f.login("alice", PASSWORDS["alice"])
    try:
        entry = next(line for line in f.sendcmd(f"MLST {name}").splitlines() if line.startswith(" "))
    finally:
        f.quit()
    facts = dict(fact.split("=", 1) for fact in entry.strip().split(" ", 1)[0].split(";") if fact)
    return next((v for k, v in facts.items() if k.lower() == "x.rftp-source"), None)


def kill_client_mid_upload(d, env, src: Path, name: str) -> int:
    """Runs rftp put src, up to three times, and kills it while the upload is
    under way; waits for rftpd to end that upload (it then keeps only the
    complete prefix) and returns the partial file's size."""
    root = d.roots["alice"]
    part, journal = root / f".{name}.rftp-part", root / f".{name}.rftp-resume"
    for _attempt in range(3):
        log_before = len(d.log())  # an earlier attempt that finished has its own line
        proc = subprocess.Popen([RFTP, "put", "-P", "2", "--block-size", "1M", str(src), url(d, name)], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if stop_mid_transfer(proc, proc.pid, part, journal):
            break
        (root / name).unlink()
    else:
        raise AssertionError("the client was never caught mid-upload")
    ended = re.compile(r"event=transfer direction=store .*result=(failed|aborted)")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not ended.search(d.log()[log_before:]):
        time.sleep(0.05)
    assert ended.search(d.log()[log_before:]), d.log()[-2000:]
    return part.stat().st_size


def test_a_local_file_rewritten_since_the_partial_upload_is_sent_whole(rftpd, env, tmp_path):
    root = rftpd.roots["alice"]
    on_a_file_system_with_user_xattrs(root)
    src = random_file(tmp_path / "w.bin", SIZE)
    kept = kill_client_mid_upload(rftpd, env, src, "w.bin")
    assert 0 < kept < SIZE
    assert mlst_source(rftpd, ".w.bin.rftp-part") == source_token(src)

    # Same size, new content, a later modification time.
    random_file(src, SIZE)
    later = time.time() + 60
    os.utime(src, (later, later))

    r = rftp(env, "--json", "put", "-c", "-P", "2", "--block-size", "1M", str(src), url(rftpd, "w.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE  # all of it again: nothing of the old version kept
    assert sha256(root / "w.bin") == sha256(src)
    assert any("another version of the local file" in n for n in summary(r).get("notes", [])), summary(r)


def test_an_unchanged_local_file_continues_its_partial_upload(rftpd, env, tmp_path):
    root = rftpd.roots["alice"]
    on_a_file_system_with_user_xattrs(root)
    src = random_file(tmp_path / "u.bin", SIZE)
    kept = kill_client_mid_upload(rftpd, env, src, "u.bin")
    assert 0 < kept < SIZE
    r = rftp(env, "--json", "put", "-c", "-P", "2", "--block-size", "1M", str(src), url(rftpd, "u.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE - kept
    assert not any("whole" in n for n in summary(r).get("notes", [])), summary(r)
    assert sha256(root / "u.bin") == sha256(src)
    assert os.listxattr(root / "u.bin") == []  # the record stays with the partial file
    assert mlst_source(rftpd, "u.bin") is None


def test_a_small_partial_upload_that_records_no_source_is_sent_whole(rftpd, env, tmp_path):
    """Under 8 MiB rftp names no source (one round trip less per small file),
    so a partial of such a file vouches for nothing: sent again whole, which
    costs at most 8 MiB."""
    root = rftpd.roots["alice"]
    src = random_file(tmp_path / "s.bin", 4 * MiB)
    (root / ".s.bin.rftp-part").write_bytes(os.urandom(MiB))  # not this file's beginning
    r = rftp(env, "--json", "put", "-c", str(src), url(rftpd, "s.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == 4 * MiB
    assert sha256(root / "s.bin") == sha256(src)
    assert any("records no source" in n for n in summary(r).get("notes", [])), summary(r)


def test_a_partial_upload_that_records_no_source_is_sent_whole(rftpd, env, tmp_path):
    """A partial another client began (or an older rftp, or an upload under
    8 MiB, which names no source): rftpd shows X.rftp-source=none, and its
    bytes, whosever they are, are not continued."""
    root = rftpd.roots["alice"]
    on_a_file_system_with_user_xattrs(root)
    src = random_file(tmp_path / "n.bin", 12 * MiB)
    (root / ".n.bin.rftp-part").write_bytes(os.urandom(4 * MiB))  # say, a 6 MiB file's, since grown
    assert mlst_source(rftpd, ".n.bin.rftp-part") == "none"
    r = rftp(env, "--json", "put", "-c", str(src), url(rftpd, "n.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == 12 * MiB
    assert sha256(root / "n.bin") == sha256(src)
    assert any("records no source" in n for n in summary(r).get("notes", [])), summary(r)


@pytest.mark.parametrize("grown", [True, False], ids=["appended-to", "rewritten"])
def test_a_shorter_remote_file_is_continued_only_when_it_is_the_local_files_beginning(rftpd, env, tmp_path, grown):
    """rftpd renames only whole uploads into place: a shorter remote file is
    an earlier version, complete. put -c continues it only when the local
    file grew by appending (the SHA-256 of the remote file against the local
    file's beginning); a rewritten file is uploaded whole."""
    root = rftpd.roots["alice"]
    src = random_file(tmp_path / "g.bin", 12 * MiB)
    data = src.read_bytes()
    (root / "g.bin").write_bytes(data[:5 * MiB] if grown else os.urandom(5 * MiB))
    r = rftp(env, "--json", "put", "-c", "-P", "2", "--block-size", "1M", str(src), url(rftpd, "g.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == (7 * MiB if grown else 12 * MiB)
    assert sha256(root / "g.bin") == sha256(src)
    noted = any("not the beginning of the local one" in n for n in summary(r).get("notes", []))
    assert noted != grown, summary(r)


@pytest.mark.skipif(bool(fuse_missing()), reason=f"SKIPPED: {fuse_missing()}")
def test_put_c_waits_while_rftpd_copies_a_long_shorter_file(env, tmp_path):
    """To continue a shorter final file, rftpd first copies it into a new
    partial (the final name keeps the old version until the new one is
    whole), and only then answers the STOR. On a slow disk, or with a prefix
    of terabytes, that outlasts --timeout: rftp waits for the reply as for
    HASH's, a second more for every 50 MB. Here rftpd's disk reads at
    100 MB/s and --timeout is 1 s: the 192 MiB prefix takes about 2 s to
    digest and 2 s more to copy."""
    prefix = 192 * MiB
    work, disk = tmp_path / "d", tmp_path / "disk"
    disk.mkdir()
    src = random_file(tmp_path / "grown.bin", prefix + MiB)
    with open(src, "rb") as f, open(disk / "grown.bin", "wb") as old:
        old.write(f.read(prefix))
    with slow_reading_mount(disk, work / "alice", 100_000_000):
        # No sync before the rename: a flush of 193 MiB through this mount
        # would count against the same 1 s as the 226.
        d = Rftpd(work, extra_config="storage: {sync_before_rename: false}\n")
        try:
            r = rftp(env, "--json", "--timeout", "1", "put", "-c", str(src), url(d, "grown.bin"))
        finally:
            d.stop()
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == MiB
    assert sha256(disk / "grown.bin") == sha256(src)


def test_a_partial_of_a_file_of_one_block_is_fetched_whole(rftpd, env, tmp_path):
    """A framed download of one block keeps no journal, so a partial of it
    proves nothing: -c fetches the file whole. Here the partial holds
    zeros, as an unsynced block may after a power loss, and records no
    version; trusted by its size, it would have become the file's start."""
    remote = random_file(rftpd.roots["alice"] / "o.bin", 3 * MiB)
    dst = tmp_path / "o.bin"
    (tmp_path / "o.bin.rftp-part").write_bytes(bytes(MiB))
    r = rftp(env, "--json", "get", "-c", url(rftpd, "o.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == 3 * MiB
    assert any("fits in one block" in n for n in summary(r).get("notes", [])), summary(r)
    assert sha256(dst) == sha256(remote)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("o.bin")) == ["o.bin"]


def test_a_partial_begun_as_one_block_is_fetched_whole_at_any_block_size(rftpd, env, tmp_path):
    """Its record says it kept no journal, so a -c that would move the file
    in several blocks trusts none of it either. Zeros stand for what an
    unsynced block may be after a power loss."""
    on_a_file_system_with_user_xattrs(tmp_path)
    remote = random_file(rftpd.roots["alice"] / "w.bin", 3 * MiB)
    dst = tmp_path / "w.bin"
    part = tmp_path / "w.bin.rftp-part"
    part.write_bytes(bytes(3 * MiB))
    modify = time.strftime("%Y%m%d%H%M%S", time.gmtime(remote.stat().st_mtime))
    os.setxattr(part, "user.rftp.source", f"size={3 * MiB} modify={modify} unjournaled".encode())
    r = rftp(env, "--json", "get", "-c", "--block-size", "1M", url(rftpd, "w.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == 3 * MiB
    assert any("no resume journal" in n for n in summary(r).get("notes", [])), summary(r)
    assert sha256(dst) == sha256(remote)


def test_a_download_of_one_block_records_that_it_keeps_no_journal(rftpd, env, tmp_path):
    """What the test above builds by hand, a real download leaves when it
    dies after its block landed: held at its fsync (strace delays it), then
    killed, its partial holds the whole file, no journal, and a record that
    says so."""
    on_a_file_system_with_user_xattrs(tmp_path)
    if shutil.which("strace") is None:
        pytest.skip("SKIPPED: strace is not installed")
    remote = random_file(rftpd.roots["alice"] / "k.bin", 3 * MiB)
    dst = tmp_path / "k.bin"
    part = tmp_path / "k.bin.rftp-part"
    proc = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync",
                             "-e", "inject=fsync:delay_enter=30000000", RFTP, "get", url(rftpd, "k.bin"), str(dst)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 20
        while time.time() < deadline and not (part.exists() and part.stat().st_size == 3 * MiB):
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert part.read_bytes() == remote.read_bytes()
    assert not dst.exists()
    assert not (tmp_path / "k.bin.rftp-resume").exists()
    assert os.getxattr(part, "user.rftp.source").decode().endswith(" unjournaled")
