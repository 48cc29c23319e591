"""rftpd driven by Python's ftplib: the RFC 959/2428/3659 commands a plain
FTP client uses, and the upload rule (temporary name, then rename)."""

import ftplib
import hashlib
import io
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import PASSWORDS, Rftpd, on_a_file_system_with_user_xattrs


def login(d, user="alice"):
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=10)
    f.login(user, PASSWORDS[user])
    return f


def retr_bytes(f, name, rest=None):
    buf = bytearray()
    f.retrbinary(f"RETR {name}", buf.extend, rest=rest)
    return bytes(buf)


def test_greeting_feat_and_syst(rftpd):
    f = ftplib.FTP()
    welcome = f.connect("127.0.0.1", rftpd.port, timeout=10)
    assert welcome.startswith("220")
    feat = f.sendcmd("FEAT")
    for feature in ("EPSV", "MLST", "SIZE", "MDTM", "MFMT", "REST STREAM", "HASH SHA-256", "PARALLEL 16", "UTF8"):
        assert feature in feat
    assert f.sendcmd("SYST").startswith("215 UNIX")
    f.quit()


@pytest.mark.parametrize("size", [0, 1, 4095, 65537, 3 * 1024 * 1024 + 17])
def test_store_and_retrieve_round_trip(rftpd, size):
    data = os.urandom(size)
    f = login(rftpd)
    f.storbinary("STOR blob.bin", io.BytesIO(data))
    assert (rftpd.roots["alice"] / "blob.bin").read_bytes() == data
    assert not (rftpd.roots["alice"] / ".blob.bin.rftp-part").exists()
    assert f.size("blob.bin") == size
    assert retr_bytes(f, "blob.bin") == data
    f.quit()


def test_epsv_and_pasv_both_work(rftpd):
    f = login(rftpd)
    f.storbinary("STOR x", io.BytesIO(b"hello"))
    f.af = socket.AF_INET
    f.set_pasv(True)
    assert retr_bytes(f, "x") == b"hello"  # ftplib uses PASV for IPv4
    port = int(f.sendcmd("EPSV").split("|||")[1].split("|")[0])
    with socket.create_connection(("127.0.0.1", port)) as data_sock:
        f.sendcmd("TYPE I")
        assert f.sendcmd("RETR x").startswith("150")
        got = data_sock.makefile("rb").read()
    assert got == b"hello"
    assert f.voidresp().startswith("226")
    f.quit()


def test_rest_resumes_download_and_upload(rftpd):
    data = os.urandom(200_000)
    f = login(rftpd)
    f.storbinary("STOR r.bin", io.BytesIO(data))
    assert retr_bytes(f, "r.bin", rest=150_000) == data[150_000:]
    # An interrupted upload leaves the partial file; REST + STOR continues it.
    (rftpd.roots["alice"] / ".u.bin.rftp-part").write_bytes(data[:70_000])
    assert f.size(".u.bin.rftp-part") == 70_000
    f.storbinary("STOR u.bin", io.BytesIO(data[70_000:]), rest=70_000)
    assert (rftpd.roots["alice"] / "u.bin").read_bytes() == data
    assert not (rftpd.roots["alice"] / ".u.bin.rftp-part").exists()
    # REST beyond what the partial file holds is refused, and nothing changes.
    (rftpd.roots["alice"] / ".v.bin.rftp-part").write_bytes(b"abc")
    with pytest.raises(ftplib.error_perm, match="554"):
        f.storbinary("STOR v.bin", io.BytesIO(b"zzz"), rest=10)
    assert (rftpd.roots["alice"] / ".v.bin.rftp-part").read_bytes() == b"abc"
    with pytest.raises(ftplib.error_perm, match="554"):
        retr_bytes(f, "r.bin", rest=10_000_000)
    f.quit()


def test_appe_appends(rftpd):
    f = login(rftpd)
    f.storbinary("STOR a.txt", io.BytesIO(b"first,"))
    f.storbinary("APPE a.txt", io.BytesIO(b"second"))
    assert (rftpd.roots["alice"] / "a.txt").read_bytes() == b"first,second"
    f.quit()


def test_appe_after_a_daemon_crash_appends_to_what_the_journal_vouches_for(rftpd):
    """rftpd died mid-way through a framed upload: its partial holds blocks
    beyond a hole, and the journal says how much is good. APPE continues
    after that prefix (the hole and what lies past it are cut away)."""
    root = rftpd.roots["alice"]
    good = os.urandom(65536)
    (root / ".j.bin.rftp-part").write_bytes(good + b"\0" * 65536 + os.urandom(65536))
    (root / ".j.bin.rftp-resume").write_text(f"{len(good)}\n")
    f = login(rftpd)
    f.storbinary("APPE j.bin", io.BytesIO(b"appended"))
    f.quit()
    assert (root / "j.bin").read_bytes() == good + b"appended"
    assert not (root / ".j.bin.rftp-part").exists() and not (root / ".j.bin.rftp-resume").exists()


def test_appe_after_a_journal_that_vouches_for_nothing_keeps_the_file(rftpd):
    """An APPE was interrupted, and then the machine went down before a
    checkpoint: its partial file (the file copied, then part of the tail)
    is vouched for by nothing. The next APPE cuts it to nothing, and must
    then append after the file, as for an empty partial, not write its
    bytes alone under the file's name."""
    root = rftpd.roots["alice"]
    (root / "log.txt").write_bytes(b"kept lines\n" * 100)
    (root / ".log.txt.rftp-part").write_bytes(b"kept lines\n" * 100 + b"half a ta")
    (root / ".log.txt.rftp-resume").write_text(f"{1109:20d} {0:20d} 00000000-0000-0000-0000-000000000000\n")
    f = login(rftpd)
    f.storbinary("APPE log.txt", io.BytesIO(b"tail\n"))
    f.quit()
    assert (root / "log.txt").read_bytes() == b"kept lines\n" * 100 + b"tail\n"
    assert not (root / ".log.txt.rftp-part").exists() and not (root / ".log.txt.rftp-resume").exists()


def test_a_refused_restart_leaves_no_partial_and_a_later_appe_keeps_the_file(rftpd):
    """REST past the end of the file, then STOR: 554, and no empty partial
    file is left behind, which a later APPE would have "continued" from
    byte 0, replacing the file with what it appended."""
    root = rftpd.roots["alice"]
    f = login(rftpd)
    f.storbinary("STOR keep.txt", io.BytesIO(b"x" * 500))
    with pytest.raises(ftplib.error_perm, match="554"):
        f.storbinary("STOR keep.txt", io.BytesIO(b"late"), rest=1000)
    assert not (root / ".keep.txt.rftp-part").exists()
    f.storbinary("APPE keep.txt", io.BytesIO(b"tail"))
    assert (root / "keep.txt").read_bytes() == b"x" * 500 + b"tail"
    # An empty partial left by some earlier crash holds nothing to continue either.
    (root / ".keep.txt.rftp-part").write_bytes(b"")
    f.storbinary("APPE keep.txt", io.BytesIO(b"+more"))
    assert (root / "keep.txt").read_bytes() == b"x" * 500 + b"tail+more"
    f.quit()


def test_no_client_may_create_or_rename_onto_rftpds_own_names(rftpd):
    """A second session storing (or renaming) a file as another upload's
    partial file or journal could swap what that upload commits."""
    root = rftpd.roots["alice"]
    f = login(rftpd)
    for name in (".x.bin.rftp-part", ".x.bin.rftp-resume", "sub.rftp-part"):
        with pytest.raises(ftplib.error_perm, match="553"):
            f.storbinary(f"STOR {name}", io.BytesIO(b"evil"))
        assert not (root / name).exists()
    f.storbinary("STOR plain.bin", io.BytesIO(b"evil"))
    f.sendcmd("RNFR plain.bin")
    with pytest.raises(ftplib.error_perm, match="553"):
        f.sendcmd("RNTO .x.bin.rftp-part")
    assert (root / "plain.bin").exists() and not (root / ".x.bin.rftp-part").exists()
    # Nor a directory there, which would block every later upload of x.bin.
    for name in (".x.bin.rftp-part", ".x.bin.rftp-resume"):
        with pytest.raises(ftplib.error_perm, match="553"):
            f.mkd(name)
        assert not (root / name).exists()
    f.storbinary("STOR x.bin", io.BytesIO(b"still possible"))
    assert (root / "x.bin").read_bytes() == b"still possible"
    f.quit()


def test_an_upload_whose_partial_was_swapped_is_not_committed(rftpd):
    """The partial file was renamed away mid-upload (here by the owner
    through the file system): the daemon commits only its own file, so
    nothing reaches the final name."""
    root = rftpd.roots["alice"]
    f = login(rftpd)
    f.voidcmd("TYPE I")
    conn = f.transfercmd("STOR swapped.bin")
    conn.sendall(b"a" * 100_000)
    for _ in range(100):
        if (root / ".swapped.bin.rftp-part").exists():
            break
        time.sleep(0.05)
    os.rename(root / ".swapped.bin.rftp-part", root / "moved-away")
    (root / ".swapped.bin.rftp-part").write_bytes(b"not this upload")
    conn.close()
    with pytest.raises(ftplib.Error, match="^45"):
        f.voidresp()
    assert not (root / "swapped.bin").exists()
    assert (root / ".swapped.bin.rftp-part").read_bytes() == b"not this upload"
    f.quit()


def test_partial_upload_never_appears_under_final_name(rftpd):
    """While an upload is in flight, the final name does not exist; a data
    connection that breaks leaves only the partial file."""
    f = login(rftpd)
    f.voidcmd("TYPE I")
    conn = f.transfercmd("STOR big.bin")
    conn.sendall(b"x" * 1_000_000)
    time.sleep(0.2)
    assert not (rftpd.roots["alice"] / "big.bin").exists()
    assert (rftpd.roots["alice"] / ".big.bin.rftp-part").exists()
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    conn.close()  # RST: the upload failed
    reply = f.getresp() if False else None
    try:
        f.voidresp()
    except ftplib.Error as e:
        reply = str(e)
    assert reply and reply.startswith("426")
    assert not (rftpd.roots["alice"] / "big.bin").exists()
    assert (rftpd.roots["alice"] / ".big.bin.rftp-part").stat().st_size == 1_000_000
    f.quit()


def break_upload(f, command: str, data: bytes, part, size: int):
    """Starts command (STOR/APPE), sends data, waits until the partial file
    holds size bytes, and resets the data connection: the upload fails and
    rftpd keeps the partial file."""
    conn = f.transfercmd(command)
    conn.sendall(data)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (part.exists() and part.stat().st_size >= size):
        time.sleep(0.01)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    conn.close()
    with pytest.raises(ftplib.Error, match="^426"):
        f.voidresp()


def wait_until(what, ready, seconds=30):
    deadline = time.monotonic() + seconds
    while not ready():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


def test_an_upload_whose_partial_was_taken_over_leaves_the_new_uploads_journal(rftpd):
    """Session A uploads x.bin; another session deletes its partial file and a
    third begins its own upload of x.bin. When A's upload ends it is not put
    in place (451: the partial is not A's any more), and it must not remove
    the new upload's journal either, by name: that journal is the only
    record of which of the new upload's bytes are good after a crash."""
    root = rftpd.roots["alice"]
    part, journal = root / ".x.bin.rftp-part", root / ".x.bin.rftp-resume"
    a = login(rftpd)
    a.voidcmd("TYPE I")
    conn_a = a.transfercmd("STOR x.bin")
    conn_a.sendall(b"a" * 100_000)
    wait_until("A's bytes", lambda: part.exists() and part.stat().st_size >= 100_000)
    b = login(rftpd)
    b.delete(".x.bin.rftp-part")
    assert not journal.exists()  # the journal goes with it
    c = login(rftpd)
    c.voidcmd("TYPE I")
    conn_c = c.transfercmd("STOR x.bin")
    conn_c.sendall(b"c" * 100_000)
    wait_until("C's bytes", lambda: part.exists() and part.stat().st_size >= 100_000 and journal.exists())
    conn_a.close()
    with pytest.raises(ftplib.Error, match="^451"):
        a.voidresp()
    assert journal.exists(), "A's end removed C's journal"
    assert part.exists()
    conn_c.close()
    c.voidresp()
    assert (root / "x.bin").read_bytes() == b"c" * 100_000
    assert not journal.exists() and not part.exists()
    for f in (a, b, c):
        f.quit()


def test_an_ascii_upload_continuing_a_partial_drops_its_journal(rftpd):
    """A binary upload's partial file and journal, continued in ASCII mode
    (written in order, with no journal of its own) and cut off: the old
    journal must not stay, vouching after a power loss for bytes the ASCII
    upload rewrote without a sync. The partial's size is the resume point."""
    root = rftpd.roots["alice"]
    part, journal = root / ".t.txt.rftp-part", root / ".t.txt.rftp-resume"
    part.write_bytes(b"line\n" * 200_000)
    journal.write_text(f"{1_000_000:20d} {1_000_000:20d} 00000000-0000-0000-0000-000000000000\n")
    f = login(rftpd)
    f.voidcmd("TYPE A")
    f.sendcmd("REST 1000")
    break_upload(f, "STOR t.txt", b"text\r\n" * 200_000, part, 1000 + 500_000)
    assert not journal.exists()
    f.voidcmd("TYPE I")
    assert f.size(".t.txt.rftp-part") == part.stat().st_size
    f.quit()


def test_srce_names_the_source_of_the_next_upload_only(rftpd):
    """SRCE <token> (rftpd's own): recorded on the partial file of the next
    upload, shown as MLST's X.rftp-source fact there; an upload without one
    forgets an earlier record, and the final file keeps none."""
    root = rftpd.roots["alice"]
    on_a_file_system_with_user_xattrs(root)
    f = login(rftpd)
    feat = f.sendcmd("FEAT")
    assert "\n SRCE" in feat and "X.rftp-source*;" in feat
    for bad in ("a;b", "x" * 97, "a b", "nl\u00e9"):
        with pytest.raises(ftplib.error_perm, match="^501"):
            f.sendcmd(f"SRCE {bad}")
    f.voidcmd("TYPE I")
    assert f.sendcmd("SRCE 2000000:1764118000.000000001:1764118000.000000002").startswith("200")
    part = root / ".p.bin.rftp-part"
    break_upload(f, "STOR p.bin", b"a" * 1_000_000, part, 1_000_000)
    token = b"2000000:1764118000.000000001:1764118000.000000002"
    assert os.getxattr(part, "user.rftp.source") == token
    assert f"X.rftp-source={token.decode()};" in f.sendcmd("MLST .p.bin.rftp-part")

    # Taken by that transfer command: the next upload, without SRCE (a client
    # resuming with REST), is of bytes no source vouches for.
    f.sendcmd("REST 1000000")
    break_upload(f, "STOR p.bin", b"b" * 1_000_000, part, 2_000_000)
    assert "user.rftp.source" not in os.listxattr(part)
    assert "X.rftp-source=none;" in f.sendcmd("MLST .p.bin.rftp-part")

    # Only what SRCE could have set ever reaches a reply line.
    os.setxattr(part, "user.rftp.source", b"1:2.3;\r\n250 forged")
    mlst = f.sendcmd("MLST .p.bin.rftp-part")
    assert "X.rftp-source=none;" in mlst and "forged" not in mlst

    # A whole upload: the final file keeps no trace of the bookkeeping.
    f.sendcmd("SRCE 5:1.000000000:1.000000000")
    f.storbinary("STOR whole.bin", io.BytesIO(b"12345"))
    assert os.listxattr(root / "whole.bin") == []
    assert "X.rftp-source" not in f.sendcmd("MLST whole.bin")
    f.quit()


def test_directories_rename_delete(rftpd):
    f = login(rftpd)
    assert f.mkd("d1") == "/d1"
    f.cwd("d1")
    assert f.pwd() == "/d1"
    f.storbinary("STOR f", io.BytesIO(b"1"))
    f.cwd("..")
    assert f.pwd() == "/"
    assert f.nlst("d1") == ["f"]
    f.rename("d1/f", "d1/g")
    assert [n for n, _ in f.mlsd("d1")] == [".", "g"]
    with pytest.raises(ftplib.error_perm, match="550"):
        f.rmd("d1")  # not empty
    f.delete("d1/g")
    f.rmd("d1")
    assert f.nlst() == []
    with pytest.raises(ftplib.error_perm, match="503"):
        f.sendcmd("RNTO x")
    f.quit()


def test_mlsd_mlst_size_mdtm_list(rftpd):
    (rftpd.roots["alice"] / "sub").mkdir()
    (rftpd.roots["alice"] / "file.txt").write_bytes(b"12345")
    os.utime(rftpd.roots["alice"] / "file.txt", (1700000000, 1700000000))
    f = login(rftpd)
    entries = dict(f.mlsd())
    assert entries["file.txt"]["type"] == "file" and entries["file.txt"]["size"] == "5"
    assert entries["sub"]["type"] == "dir"
    assert entries["file.txt"]["modify"] == "20231114221320"
    assert f.sendcmd("MDTM file.txt") == "213 20231114221320"
    assert "type=file;size=5;" in f.sendcmd("MLST file.txt")
    lines = []
    f.retrlines("LIST", lines.append)
    assert any(l.startswith("-rw") and l.endswith(" file.txt") and " 5 " in l for l in lines)
    assert any(l.startswith("d") and l.endswith(" sub") for l in lines)
    with pytest.raises(ftplib.error_perm, match="550"):
        f.size("sub")
    status = f.sendcmd("STAT /")
    assert status.startswith("213-") and " file.txt" in status and " sub" in status
    assert "transfer" not in f.sendcmd("STAT").lower()
    f.quit()


def test_mfmt_sets_a_files_modification_time_and_nothing_else(rftpd):
    root = rftpd.roots["alice"]
    (root / "sub").mkdir()
    (root / "a file.txt").write_bytes(b"12345")
    os.utime(root / "a file.txt", (1600000000, 1600000000))
    os.symlink("a file.txt", root / "link")
    f = login(rftpd)
    assert f.sendcmd("MFMT 20231114221320 a file.txt") == "213 Modify=20231114221320; /a file.txt"
    st = os.stat(root / "a file.txt")
    assert st.st_mtime == 1700000000 and st.st_atime == 1600000000
    f.sendcmd("MFMT 20231114221321.5 /a file.txt")
    assert os.stat(root / "a file.txt").st_mtime_ns == 1700000001_500000000
    assert f.sendcmd("MDTM a file.txt") == "213 20231114221321"
    for bad in ("MFMT 20231314221320 a file.txt", "MFMT 2023111422132 a file.txt", "MFMT 20231114221320",
                "MFMT 20230230000000 a file.txt", "MFMT 20231114221320x a file.txt"):
        with pytest.raises(ftplib.error_perm, match="501"):
            f.sendcmd(bad)
    for refused in ("MFMT 20231114221320 sub", "MFMT 20231114221320 link", "MFMT 20231114221320 missing",
                    "MFMT 20231114221320 ../../etc/passwd"):
        with pytest.raises(ftplib.error_perm, match="55"):
            f.sendcmd(refused)
    assert os.stat(root / "a file.txt").st_mtime_ns == 1700000001_500000000  # not through the link
    with pytest.raises(ftplib.error_perm, match="553"):
        f.sendcmd("MFMT 20231114221320 .x.rftp-part")
    f.quit()
    g = login(rftpd, "bob")
    (rftpd.roots["bob"] / "keep.txt").write_bytes(b"keep")
    with pytest.raises(ftplib.error_perm, match="550"):
        g.sendcmd("MFMT 20231114221320 keep.txt")
    assert os.stat(rftpd.roots["bob"] / "keep.txt").st_mtime != 1700000000
    g.quit()


def test_hash_matches_sha256(rftpd):
    data = os.urandom(1_234_567)
    (rftpd.roots["alice"] / "h.bin").write_bytes(data)
    f = login(rftpd)
    assert f.sendcmd("OPTS HASH SHA-256").startswith("200")
    reply = f.sendcmd("HASH h.bin")
    assert reply == f"213 SHA-256 0-{len(data)} {hashlib.sha256(data).hexdigest()} /h.bin"
    with pytest.raises(ftplib.error_perm, match="550"):
        f.sendcmd("HASH nothere")
    f.quit()


def test_block_checksums_can_be_turned_off_per_session(rftpd):
    f = login(rftpd, "alice")
    assert " BLOCKSUM CRC32C*;NONE" in f.sendcmd("FEAT")
    assert f.sendcmd("OPTS BLOCKSUM") == "200 CRC32C"
    assert f.sendcmd("OPTS BLOCKSUM none") == "200 NONE"
    assert " BLOCKSUM CRC32C;NONE*" in f.sendcmd("FEAT")
    with pytest.raises(ftplib.error_perm, match="501"):
        f.sendcmd("OPTS BLOCKSUM MD5")
    assert f.sendcmd("OPTS BLOCKSUM") == "200 NONE"  # a refused choice changes nothing
    assert f.sendcmd("OPTS BLOCKSUM CRC32C") == "200 CRC32C"
    f.quit()
    # Another session starts with them on.
    g = login(rftpd, "alice")
    assert g.sendcmd("OPTS BLOCKSUM") == "200 CRC32C"
    g.quit()


def test_allo_announces_the_size_of_the_next_stor(rftpd):
    f = login(rftpd, "alice")
    assert f.sendcmd("ALLO").startswith("202")
    with pytest.raises(ftplib.error_perm, match="501"):
        f.sendcmd("ALLO lots")
    with pytest.raises(ftplib.error_perm, match="501"):
        f.sendcmd("ALLO 10 X 5")
    assert f.sendcmd("ALLO 100 R 10").startswith("200")
    data = os.urandom(100)
    f.storbinary("STOR allo.bin", io.BytesIO(data))
    assert (rftpd.roots["alice"] / "allo.bin").read_bytes() == data
    # The reservation keeps the visible size honest: a shorter file than
    # announced is stored as it arrived, not padded.
    assert f.sendcmd("ALLO 1000000").startswith("200")
    f.storbinary("STOR short.bin", io.BytesIO(data))
    st = (rftpd.roots["alice"] / "short.bin").stat()
    assert st.st_size == 100 and st.st_blocks * 512 < 100_000  # and the rest of the reservation given back
    # Like REST, ALLO is for the next transfer command only, even one that
    # is refused: it never reaches a later, unrelated STOR.
    assert f.sendcmd("ALLO 1000000").startswith("200")
    assert f.sendcmd("REST 5").startswith("350")
    with pytest.raises(ftplib.error_perm, match="55"):
        f.storbinary("STOR no/such/dir/x.bin", io.BytesIO(data))
    f.storbinary("STOR later.bin", io.BytesIO(data))
    st = (rftpd.roots["alice"] / "later.bin").stat()
    assert st.st_size == 100 and st.st_blocks * 512 < 100_000
    assert retr_bytes(f, "later.bin") == data  # from byte 0: the REST went with the refused STOR
    f.quit()


def test_rest_goes_with_the_next_transfer_command_whatever_it_is(rftpd):
    """REST names the offset of the next transfer command only: a listing
    or a refused RETR takes it, so a later RETR starts at byte 0."""
    data = os.urandom(1000)
    (rftpd.roots["alice"] / "rest-once.bin").write_bytes(data)
    f = login(rftpd, "alice")
    for takes_it in (lambda: f.nlst(), lambda: list(f.mlsd()), lambda: f.retrlines("LIST", lambda line: None)):
        assert f.sendcmd("REST 500").startswith("350")
        takes_it()
        assert retr_bytes(f, "rest-once.bin") == data
    assert f.sendcmd("REST 500").startswith("350")
    with pytest.raises(ftplib.error_perm, match="550"):
        retr_bytes(f, "no-such-file.bin")
    assert retr_bytes(f, "rest-once.bin") == data
    # And REST still works for the command right after it.
    assert retr_bytes(f, "rest-once.bin", rest=500) == data[500:]
    f.quit()


def test_a_command_between_rest_and_the_transfer_drops_it(rftpd):
    """REST, then SIZE (or any command but the data connection's setup): the
    client changed its mind, and the STOR that follows starts over. It used
    to splice the old file's first bytes onto the new upload and put that
    in place with 226. The setup between REST and STOR keeps it, as rftp's
    own sequence needs (REST, EPSV, ALLO, HOLD, STOR)."""
    root = rftpd.roots["alice"]
    (root / "doc.txt").write_bytes(b"old version\n" * 100)
    f = login(rftpd, "alice")
    f.voidcmd("TYPE I")
    for between in ("SIZE doc.txt", "MDTM doc.txt", "CWD /", "PWD", "MLST doc.txt", "FEAT"):
        assert f.sendcmd("REST 1000").startswith("350")
        f.sendcmd(between)
        f.storbinary("STOR doc.txt", io.BytesIO(b"new\n"))
        assert (root / "doc.txt").read_bytes() == b"new\n", between
        (root / "doc.txt").write_bytes(b"old version\n" * 100)
    # A refused REST leaves no earlier one behind either.
    assert f.sendcmd("REST 1000").startswith("350")
    with pytest.raises(ftplib.error_perm, match="^501"):
        f.sendcmd("REST soon")
    f.storbinary("STOR doc.txt", io.BytesIO(b"new\n"))
    assert (root / "doc.txt").read_bytes() == b"new\n"
    # REST, the data connection's setup, ALLO, NOOP and STAT keep it.
    (root / "doc.txt").write_bytes(b"old version\n" * 100)
    assert f.sendcmd("REST 12").startswith("350")
    for kept in ("TYPE I", "NOOP", "STAT", "ALLO 16"):
        f.sendcmd(kept)
    f.storbinary("STOR doc.txt", io.BytesIO(b"new\n"))  # ftplib sends EPSV or PASV here too
    assert (root / "doc.txt").read_bytes() == b"old version\nnew\n"
    f.quit()


def test_a_partial_upload_is_never_renamed_under_a_final_name(rftpd):
    """RNFR .x.rftp-part, RNTO x would put an incomplete file (perhaps still
    being written by another session) under the final name: 553."""
    root = rftpd.roots["alice"]
    (root / ".x.bin.rftp-part").write_bytes(b"half")
    (root / ".x.bin.rftp-resume").write_text(f"{4:20d} {4:20d} 00000000-0000-0000-0000-000000000000\n")
    f = login(rftpd, "alice")
    for name in (".x.bin.rftp-part", ".x.bin.rftp-resume"):
        with pytest.raises(ftplib.error_perm, match="^553"):
            f.sendcmd(f"RNFR {name}")
        with pytest.raises(ftplib.error_perm, match="^503"):
            f.sendcmd("RNTO x.bin")
    assert not (root / "x.bin").exists() and (root / ".x.bin.rftp-part").read_bytes() == b"half"
    # Nor the root itself: refused at RNFR, not only at the RNTO after it.
    with pytest.raises(ftplib.error_perm, match="^550"):
        f.sendcmd("RNFR /")
    f.quit()


def test_allo_is_not_needed_where_nothing_would_be_reserved(rftpd, tmp_path):
    bob = login(rftpd, "bob")  # read-only: no STOR to reserve for
    assert bob.sendcmd("ALLO 1000000").startswith("202")
    bob.quit()
    d = Rftpd(tmp_path / "no-prealloc", extra_config="storage: {preallocate: false}\n")
    try:
        f = login(d, "alice")
        assert f.sendcmd("ALLO 1000000").startswith("202")
        data = os.urandom(100)
        f.storbinary("STOR p.bin", io.BytesIO(data))
        assert (d.roots["alice"] / "p.bin").stat().st_blocks * 512 < 100_000
        f.quit()
    finally:
        assert d.stop() == 0


def test_options_other_than_utf8_need_a_login(rftpd):
    f = ftplib.FTP()
    f.connect("127.0.0.1", rftpd.port, timeout=10)
    assert f.sendcmd("OPTS UTF8 ON").startswith("200")
    for opts in ("OPTS BLOCKSUM NONE", "OPTS PARALLEL 4", "OPTS HASH SHA-256"):
        with pytest.raises(ftplib.error_perm, match="530"):
            f.sendcmd(opts)
    f.close()


def test_a_stream_count_above_the_servers_maximum_is_capped_not_refused(rftpd):
    # docs/protocol.md: "a larger n is capped to the server's max_streams".
    f = login(rftpd)
    assert f.sendcmd("OPTS PARALLEL 100000 1048576") == "200 PARALLEL 16 1048576"
    assert f.sendcmd("OPTS PARALLEL 18446744073709551615") == "200 PARALLEL 16 1048576"
    with pytest.raises(ftplib.error_perm, match="501"):
        f.sendcmd("OPTS PARALLEL 18446744073709551616")
    assert f.sendcmd("OPTS PARALLEL 0") == "200 PARALLEL 0 1048576"
    f.quit()


def test_read_only_user_cannot_change_anything(rftpd):
    (rftpd.roots["bob"] / "keep.txt").write_bytes(b"keep")
    f = login(rftpd, "bob")
    assert retr_bytes(f, "keep.txt") == b"keep"
    for action in (lambda: f.storbinary("STOR new", io.BytesIO(b"x")),
                   lambda: f.delete("keep.txt"),
                   lambda: f.mkd("d"),
                   lambda: f.rename("keep.txt", "other")):
        with pytest.raises(ftplib.error_perm, match="550"):
            action()
    assert sorted(os.listdir(rftpd.roots["bob"])) == ["keep.txt"]
    f.quit()


def test_ascii_type_converts_line_endings(rftpd):
    f = login(rftpd)
    f.storlines("STOR t.txt", io.BytesIO(b"one\ntwo\n"))
    assert (rftpd.roots["alice"] / "t.txt").read_bytes() == b"one\ntwo\n"
    lines = []
    f.retrlines("RETR t.txt", lines.append)
    assert lines == ["one", "two"]
    f.quit()


def test_abort_during_download(rftpd):
    (rftpd.roots["alice"] / "huge.bin").write_bytes(os.urandom(64 * 1024 * 1024))
    f = login(rftpd)
    f.voidcmd("TYPE I")
    conn = f.transfercmd("RETR huge.bin")
    conn.recv(65536)
    f.putcmd("ABOR")
    conn.close()
    first = f.getline()
    assert first.startswith("426")
    # ABOR's own reply: 226 when it stopped the transfer; 225 (as vsftpd
    # says) when the closed data connection had already ended it.
    assert f.getline()[:3] in ("226", "225")
    assert f.sendcmd("NOOP").startswith("200")
    f.quit()


def test_two_sessions_cannot_upload_the_same_file_at_once(rftpd):
    f1, f2 = login(rftpd), login(rftpd)
    f1.voidcmd("TYPE I")
    c1 = f1.transfercmd("STOR same.bin")
    c1.sendall(b"a" * 1000)
    time.sleep(0.2)
    with pytest.raises(ftplib.error_temp, match="450"):
        f2.storbinary("STOR same.bin", io.BytesIO(b"b" * 10))
    c1.close()
    f1.voidresp()
    assert (rftpd.roots["alice"] / "same.bin").read_bytes() == b"a" * 1000
    f1.quit()
    f2.quit()


def test_concurrent_sessions_transfer_independently(rftpd):
    payloads = {i: os.urandom(500_000 + i) for i in range(8)}
    errors = []

    def worker(i):
        try:
            f = login(rftpd)
            f.storbinary(f"STOR c{i}.bin", io.BytesIO(payloads[i]))
            assert retr_bytes(f, f"c{i}.bin") == payloads[i]
            f.quit()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, data in payloads.items():
        assert (rftpd.roots["alice"] / f"c{i}.bin").read_bytes() == data


def test_anonymous_is_off_by_default_and_read_only_when_on(rftpd_factory):
    d = rftpd_factory()
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=10)
    with pytest.raises(ftplib.error_perm, match="530"):
        f.login("anonymous", "me@example.org")
    f.close()
    d2 = rftpd_factory(anonymous=True)
    (d2.roots["anonymous"] / "pub.txt").write_bytes(b"public")
    f = ftplib.FTP()
    f.connect("127.0.0.1", d2.port, timeout=10)
    f.login("anonymous", "me@example.org")
    assert retr_bytes(f, "pub.txt") == b"public"
    with pytest.raises(ftplib.error_perm, match="550"):
        f.storbinary("STOR x", io.BytesIO(b"x"))
    f.quit()


def test_an_upload_the_file_system_refuses_is_550_not_a_reserved_name(rftpd):
    """The file system's own EPERM (an immutable directory refuses a new
    file, even to root) is a permission refusal: 550, not the 553 rftpd
    gives a client that tries to upload onto one of rftpd's own names."""
    root = rftpd.roots["alice"]
    locked = root / "locked"
    locked.mkdir()
    if subprocess.run(["chattr", "+i", str(locked)], capture_output=True).returncode != 0:
        pytest.skip(f"chattr +i is refused on {locked}'s file system (or not root)")
    try:
        f = login(rftpd)
        with pytest.raises(ftplib.error_perm) as refused:
            f.storbinary("STOR locked/new.bin", io.BytesIO(b"data"))
        assert str(refused.value).startswith("550 Permission denied"), refused.value
        f.quit()
    finally:
        subprocess.run(["chattr", "-i", str(locked)], check=True)
    assert list(locked.iterdir()) == []
