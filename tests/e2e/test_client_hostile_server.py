"""rftp against a server that lies: a small scripted FTP server on
loopback, speaking just enough of the protocol to reach the lie."""

import hashlib
import os
import socket
import subprocess
import threading

import pytest

from conftest import TESTING, on_a_file_system_with_user_xattrs

RFTP = str(TESTING / "rftp")


class ScriptedServer:
    """Answers each command from a table (default 502) and records what it got.
    An answer of None is silence; a callable answers with what it returns
    for the command. With a payload, EPSV opens a data port and
    RETR sends the payload on it (150, the bytes, 226), whatever SIZE said;
    STOR takes what comes on it into `stored` (150, the bytes, 226)."""

    def __init__(self, answers, payload=None):
        self.answers = answers
        self.payload = payload
        self.data = None
        self.stored = b""
        self.seen = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        conn, _ = self.sock.accept()
        with conn, conn.makefile("rwb", buffering=0) as f:
            f.write(b"220 scripted\r\n")
            for line in f:
                command = line.decode().strip()
                self.seen.append(command)
                verb = command.split(" ")[0].upper()
                key = " ".join(command.split(" ")[:2]).upper() if verb == "OPTS" else verb
                if self.payload is not None and verb in ("EPSV", "RETR", "STOR"):
                    self._data_command(f, verb)
                    continue
                answer = self.answers.get(key, "502 not here")
                if callable(answer):
                    answer = answer(command)
                if answer is not None:
                    f.write(answer.encode() + b"\r\n")
                if verb == "QUIT":
                    return

    def _data_command(self, f, verb):
        if verb == "EPSV":
            self.data = socket.socket()
            self.data.bind(("127.0.0.1", 0))
            self.data.listen(1)
            f.write(f"229 Entering Extended Passive Mode (|||{self.data.getsockname()[1]}|)\r\n".encode())
            return
        f.write(b"150 here it comes\r\n" if verb == "RETR" else b"150 send it\r\n")
        conn, _ = self.data.accept()
        with conn:
            if verb == "RETR":
                conn.sendall(self.payload)
            else:
                while chunk := conn.recv(65536):
                    self.stored += chunk
        self.data.close()
        f.write(b"226 done\r\n")


def run_rftp(tmp_path, *args):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "RFTP_PASSWORD": "x"}
    return subprocess.run([RFTP, *args], env=env, capture_output=True, timeout=60)


PLAIN_SERVER = {"USER": "331 password please", "PASS": "230 in", "TYPE": "200 binary", "QUIT": "221 bye",
                "FEAT": "211-Features:\r\n SIZE\r\n EPSV\r\n HASH SHA-256\r\n211 End",
                "OPTS HASH": "200 SHA-256"}


def test_a_hash_that_never_comes_keeps_the_download_and_says_timeout(tmp_path):
    """--verify: a server slow to answer HASH is a timeout (exit 3), not a
    digest mismatch; the download, which may well be whole, is kept as its
    partial file for a later -c --verify, and never renamed into place."""
    payload = os.urandom(100_000)
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 100000", HASH=None), payload)
    r = run_rftp(tmp_path, "get", "--verify", "--timeout", "2", f"rftp://u@127.0.0.1:{server.port}/f.bin",
                 str(tmp_path / "f.bin"))
    assert r.returncode == 3, r.stderr
    assert b"--verify" in r.stderr and b"HASH" in r.stderr, r.stderr
    assert not (tmp_path / "f.bin").exists()
    assert (tmp_path / "f.bin.rftp-part").read_bytes() == payload


def test_a_download_kept_when_its_hash_never_came_is_not_resumed_from_another_version(tmp_path):
    """The kept partial file of a --verify download whose HASH never came is
    whole, but only for the version it came from: it keeps its source
    record until the digests agree, so a later -c against a changed file
    starts over. It used to lose the record first, and -c (without
    --verify) then put the old version in place without fetching a byte."""
    on_a_file_system_with_user_xattrs(tmp_path)
    old, new = os.urandom(100_000), os.urandom(100_000)
    with_mdtm = dict(PLAIN_SERVER, FEAT="211-Features:\r\n SIZE\r\n MDTM\r\n EPSV\r\n HASH SHA-256\r\n211 End")
    server = ScriptedServer(dict(with_mdtm, SIZE="213 100000", MDTM="213 20260101000000", HASH=None), old)
    r = run_rftp(tmp_path, "get", "--verify", "--timeout", "2", f"rftp://u@127.0.0.1:{server.port}/f.bin",
                 str(tmp_path / "f.bin"))
    assert r.returncode == 3, r.stderr
    part = tmp_path / "f.bin.rftp-part"
    assert part.read_bytes() == old
    assert "user.rftp.source" in os.listxattr(part)
    server = ScriptedServer(dict(with_mdtm, SIZE="213 100000", MDTM="213 20260202000000"), new)
    r = run_rftp(tmp_path, "get", "-c", f"rftp://u@127.0.0.1:{server.port}/f.bin", str(tmp_path / "f.bin"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "f.bin").read_bytes() == new


def test_verify_with_stdout_or_a_device_is_a_usage_error_whatever_the_server(tmp_path):
    """--verify with nothing to read back is a command-line error (exit 2),
    said before connecting: a server without HASH used to turn it into
    exit 7."""
    no_hash = dict(PLAIN_SERVER, FEAT="211-Features:\r\n SIZE\r\n EPSV\r\n211 End")
    for args in (["get", "--verify", "rftp://u@127.0.0.1:{port}/f.bin", "-"],
                 ["put", "--verify", "--size", "1M", "/dev/zero", "rftp://u@127.0.0.1:{port}/z.bin"]):
        server = ScriptedServer(no_hash)
        r = run_rftp(tmp_path, *[a.format(port=server.port) for a in args])
        assert r.returncode == 2, (args, r.stderr)
        assert server.seen == [], server.seen


def test_a_file_shorter_than_its_size_is_not_kept_for_a_resume(tmp_path):
    """The server's SIZE said 100000 and 60000 came with a 226: the file
    changed or the server is broken. Exit 7, and no partial file that a
    later -c would continue as if it were a prefix of the file."""
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 100000"), os.urandom(60_000))
    r = run_rftp(tmp_path, "get", f"rftp://u@127.0.0.1:{server.port}/f.bin", str(tmp_path / "f.bin"))
    assert r.returncode == 7, r.stderr
    assert b"100000" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)


@pytest.mark.parametrize("dele", ["250 deleted", None], ids=["removed", "no-answer"])
def test_an_upload_the_server_holds_short_is_removed_there(tmp_path, dele):
    """A plain stream's server said 226 but its SIZE is short of what was
    sent: exit 7, and rftp removes that file (DELE) so nobody takes it for
    the whole one. A DELE that is never answered says so, and to remove the
    file by hand."""
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(100_000))
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 60000", DELE=dele), payload=b"")
    r = run_rftp(tmp_path, "put", "--timeout", "2", str(src), f"rftp://u@127.0.0.1:{server.port}/up.bin")
    assert r.returncode == 7, r.stderr
    assert server.stored == src.read_bytes()
    assert "DELE /up.bin" in server.seen, server.seen
    if dele:
        assert b"server holds 60000 bytes" in r.stderr and b"rftp removed /up.bin" in r.stderr, r.stderr
    else:
        assert b"removing /up.bin from the server did not finish" in r.stderr, r.stderr
        assert b"remove it (rftp rm)" in r.stderr, r.stderr


def test_an_upload_the_server_holds_longer_is_left_there(tmp_path):
    """A SIZE larger than what was sent is not this run's alone (a server
    that appends, or keeps the upload under another name and reports the
    old file): exit 7, and no DELE of what may be the user's file."""
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(100_000))
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 150000", DELE="250 deleted"), payload=b"")
    r = run_rftp(tmp_path, "put", str(src), f"rftp://u@127.0.0.1:{server.port}/up.bin")
    assert r.returncode == 7, r.stderr
    assert b"server holds 150000 bytes" in r.stderr and b"left as it is" in r.stderr, r.stderr
    assert not any(c.startswith("DELE") for c in server.seen), server.seen


def test_a_size_reply_with_more_than_digits_is_no_size(tmp_path):
    """After an upload, a SIZE of "213 100000abc" is not 100000 bytes held:
    the reply is unreadable (exit 5), not a check passed. rftp read the
    leading digits and took the upload for whole."""
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(100_000))
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 100000abc"), payload=b"")
    r = run_rftp(tmp_path, "put", str(src), f"rftp://u@127.0.0.1:{server.port}/up.bin")
    assert r.returncode == 5, r.stderr
    assert b"unreadable reply '100000abc'" in r.stderr, r.stderr


@pytest.mark.parametrize("server_digest", ["right", "wrong"])
def test_verify_of_an_upload_compares_the_bytes_sent_though_the_file_grew(tmp_path, server_digest):
    """put --verify over one stream reads the local file again for its
    digest: the bytes it sent (its first SIZE bytes, through the descriptor
    it sent them from), so a file that grew since (a log) still verifies.
    Where the digests differ but the local file changed since it was opened,
    the server's copy may be exactly what was sent: it is left, and the
    message says why."""
    src = tmp_path / "log.bin"
    sent = os.urandom(100_000)
    src.write_bytes(sent)

    def hash_after_the_file_grew(command):
        with open(src, "ab") as f:
            f.write(b"more lines")
        digest = hashlib.sha256(sent if server_digest == "right" else b"other").hexdigest()
        return f"213 SHA-256 0-100000 {digest} /log.bin"

    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 100000", HASH=hash_after_the_file_grew, DELE="250 deleted"),
                            payload=b"")
    r = run_rftp(tmp_path, "put", "--verify", str(src), f"rftp://u@127.0.0.1:{server.port}/log.bin")
    assert server.stored == sent
    if server_digest == "right":
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 7, r.stderr
        assert b"changed since rftp opened it" in r.stderr, r.stderr
        assert not any(c.startswith("DELE") for c in server.seen), server.seen


def test_a_parallel_grant_larger_than_asked_is_refused(tmp_path):
    """Each stream is a connection and a thread: a server granting 100000 of
    them (or blocks larger than asked) must not be obeyed."""
    server = ScriptedServer({
        "USER": "331 password please", "PASS": "230 in",
        "FEAT": "211-Features:\r\n PARALLEL 16\r\n SIZE\r\n211 End",
        "TYPE": "200 binary", "OPTS PARALLEL": "200 PARALLEL 100000 1048576", "QUIT": "221 bye",
    })
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(3 << 20))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "RFTP_PASSWORD": "x"}
    r = subprocess.run([RFTP, "put", "-P", "4", "--block-size", "1M", str(src),
                        f"rftp://u@127.0.0.1:{server.port}/f.bin"], env=env, capture_output=True, timeout=60)
    assert r.returncode == 5, r.stderr
    assert b"granted more than was asked" in r.stderr
    # Only the EPSV that shares the OPTS PARALLEL round trip may have gone.
    seen = [c.upper() for c in server.seen]
    assert not any(c.startswith(("PASV", "STOR")) for c in seen), seen
    assert seen.count("EPSV") <= 1 and ("EPSV" not in seen or seen[seen.index("EPSV") - 1].startswith("OPTS PARALLEL"))


@pytest.mark.parametrize("answer, code", [("200 DATATOKEN not-hex-at-all", 3), ("200 DATATOKEN", 3),
                                          ("502 not here", 0)])
def test_a_data_token_rftp_cannot_read_ends_the_run_a_refusal_does_not(tmp_path, answer, code):
    """rftpd serves no data connection without the token once it gave one:
    a 200 rftp cannot read would leave every transfer to wait out the data
    timeout, so rftp says so at once (exit 3), before the listing (the EPSV
    went in the same write as OPTS DATATOKEN). A refusal is no failure: the
    data connections go without a token (a listing here)."""
    server = ScriptedServer({
        "USER": "331 password please", "PASS": "230 in", "QUIT": "221 bye", "TYPE": "200 binary",
        "FEAT": "211-Features:\r\n PARALLEL 16\r\n DATATOKEN\r\n EPSV\r\n211 End",
        "OPTS DATATOKEN": answer, "LIST": "550 nothing to list",
    })
    r = run_rftp(tmp_path, "ls", f"rftp://u@127.0.0.1:{server.port}/")
    assert "OPTS DATATOKEN" in server.seen, server.seen
    if code:
        assert r.returncode == code, r.stderr
        assert b"OPTS DATATOKEN: the server's answer holds no token" in r.stderr, r.stderr
        assert not any(c.upper().startswith("LIST") for c in server.seen), server.seen
    else:
        assert any(c.upper().startswith("EPSV") for c in server.seen), server.seen
        assert b"gave none" in r.stderr, r.stderr
