"""rftp against a server that lies: a small scripted FTP server on
loopback, speaking just enough of the protocol to reach the lie."""

import os
import socket
import subprocess
import threading

from conftest import BUILD

RFTP = str(BUILD / "rftp")


class ScriptedServer:
    """Answers each command from a table (default 502) and records what it got."""

    def __init__(self, answers):
        self.answers = answers
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
                f.write(self.answers.get(key, "502 not here").encode() + b"\r\n")
                if verb == "QUIT":
                    return


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
