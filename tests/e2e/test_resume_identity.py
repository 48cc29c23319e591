"""rftp get -c continues a partial download only while the remote file is
the one it began: a file rewritten in place since (same size, new content,
new modification time) is fetched anew, never completed into a mix of its
old beginning and its new end."""

import os
import time
from pathlib import Path

import pytest

from test_client_rftpd import RFTP, MiB, env, random_file, rftp, sha256, summary, url  # noqa: F401
from test_whole_reservation import SIZE, kill_client_mid_download


def on_a_file_system_with_user_xattrs(directory: Path):
    probe = directory / ".xattr-probe"
    probe.write_bytes(b"")
    try:
        os.setxattr(probe, "user.rftp.probe", b"1")
    except OSError:
        pytest.skip("SKIPPED: this file system keeps no user extended attributes")
    finally:
        probe.unlink()


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


def test_an_unchanged_remote_file_is_continued(rftpd, env, tmp_path):
    remote = random_file(rftpd.roots["alice"] / "u.bin", SIZE)
    dst = tmp_path / "u.bin"
    _, prefix = kill_client_mid_download(["-P", "2", "--block-size", "1M", url(rftpd, "u.bin")], env, dst)
    r = rftp(env, "--json", "get", "-c", "-P", "2", "--block-size", "1M", url(rftpd, "u.bin"), str(dst))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == SIZE - prefix
    assert sha256(dst) == sha256(remote)
    assert os.listxattr(dst) == []  # the bookkeeping stays with the partial file
