"""put --verify to rftpd holds the upload aside (HOLD) until both digests
agree, then puts it in place (COMT): a wrong upload is never under the
final name, whose old version stays whole; a held upload is locked against
other uploaders, only its own session puts it in place, and one whose
client went away is finished by put -c --verify without sending it again
(docs/protocol.md, "Uploads")."""

import ftplib
import io

import pytest

from conftest import PASSWORDS, on_a_file_system_with_user_xattrs
from test_client_rftpd import MiB, env, random_file, rftp, sha256, summary, url  # noqa: F401 (env is a fixture)
from test_tcp_integrity import FLIP

from source_identity import source_token


def login(d) -> ftplib.FTP:
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=10)
    f.login("alice", PASSWORDS["alice"])
    return f


def test_a_wrong_upload_is_never_in_place_and_the_old_version_stays(rftpd, env, tmp_path):
    root = rftpd.roots["alice"]
    old = random_file(root / "data.bin", 3 * MiB)
    old_digest = sha256(old)
    src = random_file(tmp_path / "data.bin", 8 * MiB)
    # Without block checksums, only the SHA-256 sees the damaged block.
    r = rftp(dict(env, **{FLIP: "1"}), "--no-progress", "put", "--no-block-checksums", "--verify", "-P", "2",
             "--block-size", "1M", str(src), url(rftpd, "data.bin"))
    assert r.returncode == 7, r.stderr
    assert b"kept aside as /.data.bin.rftp-part, never in place of /data.bin" in r.stderr, r.stderr
    assert b"rftp removed /.data.bin.rftp-part from the server" in r.stderr, r.stderr
    assert sha256(root / "data.bin") == old_digest
    assert not (root / ".data.bin.rftp-part").exists()
    assert "event=commit" not in rftpd.log()


def test_a_right_upload_is_put_in_place_once_verified(rftpd, env, tmp_path):
    root = rftpd.roots["alice"]
    src = random_file(tmp_path / "ok.bin", 5 * MiB + 3)
    r = rftp(env, "-vv", "--no-progress", "put", "--verify", str(src), url(rftpd, "ok.bin"))
    assert r.returncode == 0, r.stderr
    trace = r.stderr.decode()
    assert trace.index("--> HOLD") < trace.index("--> STOR") < trace.index("--> HASH /.ok.bin.rftp-part") \
        < trace.index("--> COMT /ok.bin"), trace[-3000:]
    assert sha256(root / "ok.bin") == sha256(src)
    assert not (root / ".ok.bin.rftp-part").exists()
    assert "event=commit path=/ok.bin" in rftpd.log(), rftpd.log()[-2000:]
    # Without --verify nothing waits for a digest, so nothing is held.
    r = rftp(env, "-vv", "--no-progress", "put", str(src), url(rftpd, "plain.bin"))
    assert r.returncode == 0, r.stderr
    assert b"--> HOLD" not in r.stderr and b"--> COMT" not in r.stderr
    assert sha256(root / "plain.bin") == sha256(src)


def test_a_held_upload_is_locked_and_only_its_own_session_puts_it_in_place(rftpd):
    root = rftpd.roots["alice"]
    a, b = login(rftpd), login(rftpd)
    try:
        assert a.sendcmd("HOLD").startswith("200")
        done = a.storbinary("STOR held.bin", io.BytesIO(b"x" * 1000))
        assert done.startswith("226") and "held as /.held.bin.rftp-part until COMT" in done, done
        assert not (root / "held.bin").exists()
        assert (root / ".held.bin.rftp-part").read_bytes() == b"x" * 1000
        with pytest.raises(ftplib.error_temp, match="^450"):
            b.storbinary("STOR held.bin", io.BytesIO(b"y"))
        with pytest.raises(ftplib.error_perm, match="^503"):
            b.sendcmd("COMT held.bin")
        with pytest.raises(ftplib.error_perm, match="^503"):
            a.sendcmd("COMT other.bin")
        assert a.sendcmd("COMT held.bin").startswith("250")
        assert (root / "held.bin").read_bytes() == b"x" * 1000
        assert not (root / ".held.bin.rftp-part").exists()
        with pytest.raises(ftplib.error_perm, match="^503"):
            a.sendcmd("COMT held.bin")  # once
        # HOLD is taken by the next transfer command, like REST: this upload goes in place.
        a.sendcmd("HOLD")
        a.retrlines("NLST")
        a.storbinary("STOR after.bin", io.BytesIO(b"z"))
        assert (root / "after.bin").read_bytes() == b"z"
        # A held upload deleted (its digest was wrong) is no longer there to put in place.
        a.sendcmd("HOLD")
        a.storbinary("STOR dropped.bin", io.BytesIO(b"w"))
        a.delete(".dropped.bin.rftp-part")
        with pytest.raises(ftplib.error_perm, match="^503"):
            a.sendcmd("COMT dropped.bin")
        assert not (root / "dropped.bin").exists()
    finally:
        a.quit()
        b.quit()


def test_put_c_verify_puts_in_place_an_upload_held_when_its_client_went_away(rftpd, env, tmp_path):
    root = rftpd.roots["alice"]
    on_a_file_system_with_user_xattrs(root)
    src = random_file(tmp_path / "gone.bin", 9 * MiB)
    a = login(rftpd)
    a.sendcmd(f"SRCE {source_token(src)}")  # as rftp names it, so -c trusts the partial
    a.sendcmd("HOLD")
    with open(src, "rb") as f:
        assert "held as" in a.storbinary("STOR gone.bin", f)
    a.close()  # gone without COMT
    assert not (root / "gone.bin").exists()
    r = rftp(env, "--json", "--no-progress", "put", "-c", "--verify", str(src), url(rftpd, "gone.bin"))
    assert r.returncode == 0, r.stderr
    assert summary(r)["bytes"] == 0, summary(r)  # nothing sent again
    assert sha256(root / "gone.bin") == sha256(src)
    assert not (root / ".gone.bin.rftp-part").exists()


def test_a_held_upload_gives_way_to_its_sessions_next_upload_and_a_failed_comt_keeps_it(rftpd):
    root = rftpd.roots["alice"]
    a, b = login(rftpd), login(rftpd)
    try:
        # The session's next upload lets the lock go: even of the same name.
        a.sendcmd("HOLD")
        a.storbinary("STOR again.bin", io.BytesIO(b"1" * 10))
        assert a.storbinary("STOR again.bin", io.BytesIO(b"2" * 10)).startswith("226 Transfer complete.")
        assert (root / "again.bin").read_bytes() == b"2" * 10
        # A STOR refused for want of its argument drops HOLD too, as REST.
        a.sendcmd("HOLD")
        with pytest.raises(ftplib.error_perm, match="^501"):
            a.sendcmd("STOR")
        a.storbinary("STOR plain.bin", io.BytesIO(b"p"))
        assert (root / "plain.bin").read_bytes() == b"p"
        # A COMT that cannot rename keeps the upload held, for a COMT once mended.
        a.sendcmd("HOLD")
        a.storbinary("STOR y.bin", io.BytesIO(b"y" * 7))
        (root / "y.bin").mkdir()
        with pytest.raises(ftplib.error_temp, match="^451"):
            a.sendcmd("COMT y.bin")
        (root / "y.bin").rmdir()
        assert a.sendcmd("COMT y.bin").startswith("250")
        assert (root / "y.bin").read_bytes() == b"y" * 7
        # Its name taken by another session's upload, the held file is gone:
        # the file there now is neither this session's to hash as its own
        # upload nor to delete.
        a.sendcmd("HOLD")
        a.storbinary("STOR x.bin", io.BytesIO(b"a" * 5))
        b.delete(".x.bin.rftp-part")
        b.sendcmd("HOLD")
        b.storbinary("STOR x.bin", io.BytesIO(b"b" * 5))
        gone = "^550 The upload held as /.x.bin.rftp-part is no longer there"
        with pytest.raises(ftplib.error_perm, match=gone):
            a.sendcmd("HASH .x.bin.rftp-part")  # not the digest of another session's file
        a.sendcmd("HOLD")
        a.storbinary("STOR z.bin", io.BytesIO(b"d"))
        b2 = login(rftpd)
        try:
            b2.delete(".z.bin.rftp-part")
            b2.sendcmd("HOLD")
            b2.storbinary("STOR z.bin", io.BytesIO(b"e"))
        finally:
            b2.quit()
        with pytest.raises(ftplib.error_perm, match="^550 The upload held as /.z.bin.rftp-part is no longer"):
            a.delete(".z.bin.rftp-part")
        assert (root / ".z.bin.rftp-part").read_bytes() == b"e"
        assert b.sendcmd("COMT x.bin").startswith("250")
        assert (root / "x.bin").read_bytes() == b"b" * 5
    finally:
        a.quit()
        b.quit()
