"""rftp against a server that lies: a small scripted FTP server on
loopback, speaking just enough of the protocol to reach the lie."""

import os
import socket
import subprocess
import threading

from conftest import BUILD

RFTP = str(BUILD / "rftp")


class ScriptedServer:
    """Answers each command from a table (default 502) and records what it got.
    An answer of None is silence. With a payload, EPSV opens a data port and
    RETR sends the payload on it (150, the bytes, 226), whatever SIZE said."""

    def __init__(self, answers, payload=None):
        self.answers = answers
        self.payload = payload
        self.data = None
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
                if self.payload is not None and verb in ("EPSV", "RETR"):
                    self._data_command(f, verb)
                    continue
                answer = self.answers.get(key, "502 not here")
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
        f.write(b"150 here it comes\r\n")
        conn, _ = self.data.accept()
        with conn:
            conn.sendall(self.payload)
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


def test_a_file_shorter_than_its_size_is_not_kept_for_a_resume(tmp_path):
    """The server's SIZE said 100000 and 60000 came with a 226: the file
    changed or the server is broken. Exit 7, and no partial file that a
    later -c would continue as if it were a prefix of the file."""
    server = ScriptedServer(dict(PLAIN_SERVER, SIZE="213 100000"), os.urandom(60_000))
    r = run_rftp(tmp_path, "get", f"rftp://u@127.0.0.1:{server.port}/f.bin", str(tmp_path / "f.bin"))
    assert r.returncode == 7, r.stderr
    assert b"100000" in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)


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
    assert not any(c.upper().startswith(("EPSV", "PASV", "STOR")) for c in server.seen), server.seen
