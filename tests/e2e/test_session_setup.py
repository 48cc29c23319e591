"""How a many-file run sets up its sessions: the sessions after the first
log in while the first one lists the tree, a wrong password is tried once,
sessions left without a file are ended, and put -r makes a tree's
directories with MKDs sent ahead (docs/cli.md, "Many files").

Against a scripted FTP server that serves several sessions at once (it can
hold a reply until other sessions have logged in) and against the real
rftpd."""

import hashlib
import os
import socket
import subprocess
import threading
import time

import pytest

from conftest import PASSWORDS, TESTING, rounds

RFTP = str(TESTING / "rftp")
FILES = {"a.bin": os.urandom(3000), "b.bin": os.urandom(5000), "c.bin": os.urandom(7000)}
MODIFY = "20260101000000"


class SessionsServer:
    """A plain FTP server (no rftp extensions) for the tree FILES, one
    thread per session. Its MLSD reply waits until logins_before_listing
    sessions have logged in (or hold_s passed, noted in listed_late)."""

    def __init__(self, files: dict, password: str = "x", logins_before_listing: int = 0, hold_s: float = 20,
                 tickets: str = ""):
        self.files, self.password = files, password
        self.logins_before_listing, self.hold_s = logins_before_listing, hold_s
        # tickets "refused": FEAT says TCKT, and every ticket shown is
        # refused; "accepted": the ticket it gave logs a session in.
        self.tickets = tickets
        self.lock = threading.Condition()
        self.logins = self.passwords_tried = self.quits = 0
        self.tickets_given = self.tickets_shown = 0
        self.listed_late = False
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _count(self, name: str) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + 1)
            self.lock.notify_all()

    def _listing(self) -> bytes:
        with self.lock:
            waited = self.lock.wait_for(lambda: self.logins >= self.logins_before_listing, timeout=self.hold_s)
            self.listed_late = self.listed_late or not waited
        return b"".join(f"type=file;size={len(b)};modify={MODIFY}; {n}\r\n".encode() for n, b in self.files.items())

    def _session(self, conn):
        data = None
        with conn, conn.makefile("rwb", buffering=0) as f:
            f.write(b"220 scripted\r\n")
            for line in f:
                verb, _, arg = line.decode().strip().partition(" ")
                verb = verb.upper()
                name = arg.rsplit("/", 1)[-1]
                if verb == "USER":
                    f.write(b"331 password please\r\n")
                elif verb == "PASS":
                    self._count("passwords_tried")
                    if arg != self.password:
                        f.write(b"530 wrong\r\n")
                        continue
                    self._count("logins")
                    f.write(b"230 in\r\n")
                elif verb == "FEAT":
                    more = b" TCKT\r\n" if self.tickets else b""
                    f.write(b"211-Features:\r\n SIZE\r\n MDTM\r\n EPSV\r\n MLST type*;size*;modify*;\r\n" + more +
                            b"211 End\r\n")
                elif verb == "TCKT" and self.tickets and not arg:
                    self._count("tickets_given")
                    f.write(b"200 TCKT " + b"ab" * 32 + b"\r\n")
                elif verb == "TCKT" and self.tickets:
                    self._count("tickets_shown")
                    if self.tickets == "accepted" and arg == "ab" * 32:
                        self._count("logins")
                        f.write(b"230 in\r\n")
                    else:
                        f.write(b"530 not valid\r\n")
                elif verb in ("TYPE", "CWD"):
                    f.write(b"200 ok\r\n" if verb == "TYPE" else b"250 ok\r\n")
                elif verb == "SIZE" and name in self.files:
                    f.write(f"213 {len(self.files[name])}\r\n".encode())
                elif verb == "MDTM" and name in self.files:
                    f.write(f"213 {MODIFY}\r\n".encode())
                elif verb == "EPSV":
                    data = socket.socket()
                    data.bind(("127.0.0.1", 0))
                    data.listen(1)
                    f.write(f"229 Entering Extended Passive Mode (|||{data.getsockname()[1]}|)\r\n".encode())
                elif verb in ("MLSD", "RETR") and data and (verb == "MLSD" or name in self.files):
                    f.write(b"150 here\r\n")
                    payload = self._listing() if verb == "MLSD" else self.files[name]
                    peer, _ = data.accept()
                    with peer:
                        peer.sendall(payload)
                    data.close()
                    data = None
                    f.write(b"226 done\r\n")
                elif verb == "QUIT":
                    self._count("quits")
                    f.write(b"221 bye\r\n")
                    return
                else:
                    f.write(b"502 not here\r\n")


def run_rftp(tmp_path, *args, password="x"):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "RFTP_PASSWORD": password}
    return subprocess.run([RFTP, *map(str, args)], env=env, capture_output=True, timeout=120)


def digests(root) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.iterdir()) if p.is_file()}


def test_the_other_sessions_log_in_while_the_first_lists(tmp_path):
    """The listing's reply waits until four sessions logged in. rftp logging
    the other three in only after its plan would hold it the full 20 s."""
    server = SessionsServer(FILES, logins_before_listing=4)
    dst = tmp_path / "dst"
    dst.mkdir()
    r = run_rftp(tmp_path, "-j", "4", "get", "-r", f"ftp://u@127.0.0.1:{server.port}/t/", dst)
    assert r.returncode == 0, r.stderr
    assert not server.listed_late, "the other sessions logged in only after the listing"
    assert digests(dst / "t") == {n: hashlib.sha256(b).hexdigest() for n, b in FILES.items()}
    assert server.logins == 4


def test_sessions_whose_ticket_is_refused_send_the_password(tmp_path):
    """The first session asks for a login ticket; the next one shows it,
    is refused, and logs in with the password, as do the others."""
    server = SessionsServer(FILES, tickets="refused")
    dst = tmp_path / "dst"
    dst.mkdir()
    r = run_rftp(tmp_path, "-j", "3", "get", "-r", f"ftp://u@127.0.0.1:{server.port}/t/", dst)
    assert r.returncode == 0, r.stderr
    assert digests(dst / "t") == {n: hashlib.sha256(b).hexdigest() for n, b in FILES.items()}
    assert server.logins == 3
    assert server.tickets_given >= 1 and server.tickets_shown >= 1


@pytest.mark.parametrize("tickets", ["accepted", ""])
def test_sync_logs_its_other_sessions_in_during_its_plan_only_with_a_ticket(tmp_path, tickets):
    """With a login ticket the listing's reply, held until four sessions
    logged in, comes at once; without one, sync logs them in only after
    its plan, and the listing waits its 2 s."""
    server = SessionsServer(FILES, logins_before_listing=4, hold_s=2, tickets=tickets)
    dst = tmp_path / "dst"
    dst.mkdir()
    r = run_rftp(tmp_path, "-j", "4", "sync", f"ftp://u@127.0.0.1:{server.port}/t/", dst)
    assert r.returncode == 0, r.stderr
    assert digests(dst) == {n: hashlib.sha256(b).hexdigest() for n, b in FILES.items()}
    assert server.listed_late == (not tickets)
    assert server.passwords_tried == (1 if tickets else len(FILES))


def test_a_wrong_password_is_tried_once_not_once_per_session(tmp_path):
    server = SessionsServer(FILES, password="right")
    dst = tmp_path / "dst"
    dst.mkdir()
    r = run_rftp(tmp_path, "-j", "4", "get", "-r", f"ftp://u@127.0.0.1:{server.port}/t/", dst, password="wrong")
    assert r.returncode == 4, r.stderr
    assert server.passwords_tried == 1
    assert list(dst.iterdir()) == []


def test_sessions_left_without_a_file_are_ended(tmp_path):
    """A tree of one file: get -r still logs in -j sessions while listing,
    and ends the three that find nothing to move with QUIT."""
    server = SessionsServer({"only.bin": os.urandom(4000)})
    dst = tmp_path / "dst"
    dst.mkdir()
    r = run_rftp(tmp_path, "-j", "4", "get", "-r", f"ftp://u@127.0.0.1:{server.port}/t/", dst)
    assert r.returncode == 0, r.stderr
    assert (dst / "t" / "only.bin").read_bytes() == server.files["only.bin"]
    deadline = time.monotonic() + 10
    while server.quits < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (server.logins, server.quits) == (4, 4)


def test_several_urls_log_in_no_more_sessions_than_files(tmp_path):
    server = SessionsServer(FILES)
    dst = tmp_path / "dst"
    dst.mkdir()
    urls = [f"ftp://u@127.0.0.1:{server.port}/t/{n}" for n in ("a.bin", "b.bin")]
    r = run_rftp(tmp_path, "-j", "4", "get", *urls, dst)
    assert r.returncode == 0, r.stderr
    assert server.logins == 2
    assert sorted(p.name for p in dst.iterdir()) == ["a.bin", "b.bin"]


@pytest.mark.parametrize("existing", [False, True])
def test_put_r_makes_a_deep_and_wide_tree(rftpd, tmp_path, existing):
    """70 directories, more than one write of MKDs ahead; the second time
    every one exists already, and each refused MKD is checked with CWD."""
    src = tmp_path / "tree"
    for i in range(10):
        for j in range(6):
            d = src / f"d{i:02d}" / f"e {j}"
            d.mkdir(parents=True)
            (d / "f.bin").write_bytes(os.urandom(100 + i * 10 + j))
    env_home = tmp_path / "home"
    env_home.mkdir()
    url = f"rftp://alice@127.0.0.1:{rftpd.port}/in/"
    if existing:
        (rftpd.roots["alice"] / "in").mkdir()
        first = run_rftp(env_home, "put", "-r", src, url, password=PASSWORDS["alice"])
        assert first.returncode == 0, first.stderr
    r = run_rftp(env_home, "-j", "3", "put", "-r", src, url, password=PASSWORDS["alice"])
    assert r.returncode == 0, r.stderr
    sent = rftpd.roots["alice"] / "in" / "tree"
    got = {p.relative_to(sent).as_posix(): p.read_bytes() for p in sent.rglob("*.bin")}
    assert got == {p.relative_to(src).as_posix(): p.read_bytes() for p in src.rglob("*.bin")}
    assert len(got) == 60


def test_set_up_lines_go_to_rftpd_together(rftpd, tmp_path):
    """Lines whose order is fixed go in one round: USER with PASS, once
    FEAT (asked before the login) says PIPELINE; TYPE I with a get's SIZE
    and MDTM; the first OPTS PARALLEL with DATAKEEP, the data token and
    EPSV; and put -r's MKDs."""
    (rftpd.roots["alice"] / "f.bin").write_bytes(os.urandom(3 << 20))
    home = tmp_path / "home"
    home.mkdir()
    r = run_rftp(home, "-vv", "get", f"rftp://alice@127.0.0.1:{rftpd.port}/f.bin", tmp_path / "f.bin",
                 password=PASSWORDS["alice"])
    assert r.returncode == 0, r.stderr
    sent = rounds(r.stderr.decode())
    assert ["USER", "PASS"] in sent and sent.index(["FEAT"]) < sent.index(["USER", "PASS"]), sent
    assert ["TYPE", "SIZE", "MDTM"] in sent, sent
    assert ["OPTS", "OPTS", "OPTS", "EPSV"] in sent, sent
    tree = tmp_path / "tree"
    for d in ("a", "b", "c", "a/x"):
        (tree / d).mkdir(parents=True)
        (tree / d / "g.bin").write_bytes(b"g")
    (rftpd.roots["alice"] / "in").mkdir()
    r = run_rftp(home, "-vv", "-j", "1", "put", "-r", tree, f"rftp://alice@127.0.0.1:{rftpd.port}/in/",
                 password=PASSWORDS["alice"])
    assert r.returncode == 0, r.stderr
    assert ["MKD"] * 5 in rounds(r.stderr.decode()), rounds(r.stderr.decode())


def test_first_command_goes_before_the_greeting_to_rftp_urls(rftpd, tmp_path):
    """To rftp:// the session's first command (AUTH TLS, which this rftpd
    refuses on loopback, then FEAT in clear) leaves before the greeting is
    read: a round trip less. ftp:// waits for the greeting, as RFC 959
    has it, whatever the server."""
    home = tmp_path / "home"
    home.mkdir()
    for scheme, early in (("rftp", True), ("ftp", False)):
        r = run_rftp(home, "-vv", "ls", f"{scheme}://alice@127.0.0.1:{rftpd.port}/", password=PASSWORDS["alice"])
        assert r.returncode == 0, r.stderr
        lines = [l for l in r.stderr.decode().splitlines() if l.startswith(("debug: -->", "debug: <--"))]
        greeting = next(i for i, l in enumerate(lines) if l.startswith("debug: <-- 220"))
        assert lines[0] == ("debug: --> AUTH TLS" if early else lines[greeting]), (scheme, lines[:4])
        assert (greeting == 1) == early, (scheme, lines[:4])
        assert "debug: <-- 230 Login successful." in lines, lines
