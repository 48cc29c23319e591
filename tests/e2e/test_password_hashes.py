"""Password hashes as an admin has them: made by mkpasswd (yescrypt) or
openssl passwd (sha512crypt), or copied from /etc/shadow, work in the users
list beside rftpd's own; `rftpd --hash-password` makes yescrypt; md5crypt,
a salt without its hash and a cost that would stall every login are refused
at start, with a message that names the key and never the value."""

import ctypes
import ftplib
import subprocess

import pytest

from conftest import PASSWORDS, TESTING, Rftpd, password_hash


def mkpasswd(method: str, password: str) -> str:
    return subprocess.run(["mkpasswd", "-m", method, "-s"], input=password, capture_output=True, text=True,
                          check=True).stdout.strip()


def openssl_passwd(password: str) -> str:
    return subprocess.run(["openssl", "passwd", "-6", "-stdin"], input=password, capture_output=True, text=True,
                          check=True).stdout.strip()


def logs_in(d: Rftpd, user: str, password: str) -> bool:
    with ftplib.FTP() as f:
        f.connect("127.0.0.1", d.port, timeout=20)
        try:
            f.login(user, password)
        except ftplib.error_perm as e:
            assert str(e).startswith("530"), e
            return False
        return True


@pytest.mark.parametrize("make", ["yescrypt", "sha512crypt"])
def test_a_hash_made_by_the_systems_tools_logs_in(tmp_path, make):
    hashed = mkpasswd("yescrypt", PASSWORDS["alice"]) if make == "yescrypt" else openssl_passwd(PASSWORDS["alice"])
    assert hashed.startswith("$y$" if make == "yescrypt" else "$6$"), hashed
    d = Rftpd(tmp_path / "d", hashes={"alice": hashed, "bob": password_hash(PASSWORDS["bob"])})
    try:
        assert logs_in(d, "alice", PASSWORDS["alice"])
        assert not logs_in(d, "alice", PASSWORDS["alice"] + "x")
        assert logs_in(d, "bob", PASSWORDS["bob"])  # rftpd's own hash beside it
    finally:
        d.stop()


def test_hash_password_makes_yescrypt_that_libcrypt_agrees_with(tmp_path):
    out = subprocess.run([str(TESTING / "rftpd"), "--hash-password"], input="s3cret\n", capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out.startswith("$y$"), out
    # The system's libcrypt, asked directly, computes the same hash from the password.
    libcrypt = ctypes.CDLL("libcrypt.so.1")
    libcrypt.crypt.restype = ctypes.c_char_p
    assert libcrypt.crypt(b"s3cret", out.encode()).decode() == out
    assert libcrypt.crypt(b"s3creT", out.encode()).decode() != out
    d = Rftpd(tmp_path / "d", hashes={"alice": out})
    try:
        assert logs_in(d, "alice", "s3cret")
    finally:
        d.stop()


@pytest.mark.parametrize("hashed,why", [
    ("$1$saltsalt$qjXMvbEw8oaL.CzflDugX/", "md5crypt ($1$) is too weak"),
    ("$6$saltstring", "not a whole hash"),
    ("$6$rounds=999999999$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1",
     "rounds above"),
])
def test_a_weak_partial_or_costly_hash_is_refused_at_start(tmp_path, hashed, why):
    config = tmp_path / "rftpd.yaml"
    root = tmp_path / "alice"
    root.mkdir()
    config.write_text(f"users:\n  - {{name: alice, password_hash: \"{hashed}\", root: \"{root}\"}}\n")
    r = subprocess.run([str(TESTING / "rftpd"), "--check-config", "--config", str(config)], capture_output=True,
                       text=True)
    assert r.returncode == 3, r.stderr
    assert "users[0].password_hash" in r.stderr and why in r.stderr, r.stderr
    assert hashed not in r.stderr, r.stderr
