"""rftpd against hostile and broken clients: path traversal, symlinks out of
the root, malformed and oversized commands, protocol misuse, brute force,
connection floods, data-port theft, stalled and killed transfers, garbage.
After each attack a fresh session must still log in and move a file
correctly, and the daemon must be alive (the fixture checks that too)."""

import ftplib
import hashlib
import io
import os
import random
import re
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, default_cost_hashes

TIMEOUT = 10


class Control:
    """A raw control connection: bytes in, (code, text) replies out."""

    def __init__(self, d, source=None, greet=True):
        self.source = source  # data connections must come from the same address
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        if source:
            self.sock.bind((source, 0))
        self.sock.connect(("127.0.0.1", d.port))
        self.buf = b""
        if greet:
            code, _ = self.reply()
            assert code == 220

    def send(self, data: bytes):
        self.sock.sendall(data)

    def _line(self) -> bytes:
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"connection closed; unparsed: {self.buf[:200]!r}")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line.rstrip(b"\r")

    def reply(self):
        """One reply, multi-line ones included (RFC 959 4.2)."""
        first = self._line()
        code = int(first[:3])
        lines = [first]
        if first[3:4] == b"-":
            while True:
                line = self._line()
                lines.append(line)
                if line[:3] == first[:3] and line[3:4] == b" ":
                    break
        return code, b"\n".join(lines).decode(errors="replace")

    def cmd(self, line: str):
        self.send(line.encode() + b"\r\n")
        return self.reply()

    def code(self, line: str) -> int:
        return self.cmd(line)[0]

    def login(self, user="alice"):
        assert self.code(f"USER {user}") == 331
        assert self.code(f"PASS {PASSWORDS[user]}") == 230

    def epsv_port(self) -> int:
        code, text = self.cmd("EPSV")
        assert code == 229, text
        return int(text.split("|||")[1].split("|")[0])

    def closed_after(self, deadline_s=TIMEOUT) -> bool:
        """True when the server closes the connection (EOF or reset) in time;
        replies that arrive first are kept in self.buf."""
        self.sock.settimeout(deadline_s)
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True
                self.buf += chunk
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def reset(self):
        """Closes with RST (SO_LINGER 0), like a killed client on a busy link."""
        rst_close(self.sock)

    def close(self):
        self.sock.close()


def rst_close(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


def connect_data(port, source=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_all(sock) -> bytes:
    out = bytearray()
    while chunk := sock.recv(1 << 20):
        out += chunk
    return bytes(out)


def retr(c: Control, name: str) -> bytes:
    c.code("TYPE I")
    port = c.epsv_port()
    with connect_data(port, c.source) as data:
        code, text = c.cmd(f"RETR {name}")
        assert code == 150, text
        got = read_all(data)
    code, text = c.reply()
    assert code == 226, text
    return got


def open_files(d, name: str) -> list[str]:
    """The daemon's open descriptors whose path ends in name (from /proc)."""
    found = []
    fd_dir = Path(f"/proc/{d.proc.pid}/fd")
    for fd in fd_dir.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed while we looked
        if target.endswith("/" + name):
            found.append(target)
    return found


def select_readable(sock, timeout=0.0) -> bool:
    import select
    return bool(select.select([sock], [], [], timeout)[0])


def wait_for(predicate, what, deadline_s=TIMEOUT, step=0.02):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def assert_daemon_healthy(d, source=None):
    """A fresh session (from source, when given) logs in and round-trips a
    file byte for byte."""
    assert d.alive(), d.log()[-3000:]
    data = os.urandom(300_000)
    f = ftplib.FTP()
    f.connect("127.0.0.1", d.port, timeout=TIMEOUT, source_address=(source, 0) if source else None)
    f.login("alice", PASSWORDS["alice"])
    f.storbinary("STOR health.bin", io.BytesIO(data))
    buf = bytearray()
    f.retrbinary("RETR health.bin", buf.extend)
    assert bytes(buf) == data
    assert (d.roots["alice"] / "health.bin").read_bytes() == data
    f.delete("health.bin")
    f.quit()


# ------------------------------------------------------------ paths


def test_traversal_stays_inside_the_root(rftpd):
    root = rftpd.roots["alice"]
    # A file next to the root, which a traversal would reach.
    (root.parent / "neighbour.txt").write_bytes(b"not yours")
    (root / "etc").mkdir()
    (root / "etc" / "passwd").write_bytes(b"the root's own etc/passwd\n")
    c = Control(rftpd)
    c.login()
    for name in ("../neighbour.txt", "../../../../etc/shadow", "/../neighbour.txt", "etc/../../neighbour.txt",
                 "..\\neighbour.txt", "....//neighbour.txt"):
        code, text = c.cmd(f"SIZE {name}")
        assert code == 550, (name, text)
    # Climbing above "/" stops at "/", so these name the root's own etc/passwd.
    for name in ("../../../../etc/passwd", "/etc/passwd", "/../../etc/passwd", "etc//./passwd"):
        assert retr(c, name) == b"the root's own etc/passwd\n", name
    assert c.cmd("CWD /../..") == (250, "250 Directory successfully changed.")
    assert c.cmd("PWD")[1] == '257 "/" is the current directory.'
    assert c.code("CDUP") == 250
    assert c.cmd("PWD")[1] == '257 "/" is the current directory.'
    c.cmd("QUIT")
    assert (root.parent / "neighbour.txt").read_bytes() == b"not yours"


def test_encoded_separators_are_just_names(rftpd):
    root = rftpd.roots["alice"]
    c = Control(rftpd)
    c.login()
    c.code("TYPE I")
    for name in ("..%2f..%2fneighbour", "%2e%2e%2fx", "..%5c..%5cy"):
        port = c.epsv_port()
        with connect_data(port) as data:
            assert c.code(f"STOR {name}") == 150
            data.sendall(b"literal")
        assert c.reply()[0] == 226
        assert c.cmd(f"SIZE {name}") == (213, "213 7")
    c.cmd("QUIT")
    assert {"..%2f..%2fneighbour", "%2e%2e%2fx", "..%5c..%5cy"} == set(os.listdir(root))
    assert (root / "..%2f..%2fneighbour").read_bytes() == b"literal"
    assert not (root.parent / "neighbour").exists()


def test_nul_and_control_bytes_in_paths_are_refused(rftpd):
    c = Control(rftpd)
    c.login()
    # An escape sequence in a name would reach other users' terminals through listings.
    for raw in (b"MKD a\x00b\r\n", b"DELE \x00\r\n", b"NOOP\x00\r\n", b"MKD a\rb\r\n",
                b"MKD \x1b]0;owned\x07x\r\n", b"MKD a\tb\r\n", b"MKD a\x7fb\r\n"):
        c.send(raw)
        code, text = c.reply()
        assert code == 500, (raw, text)
    assert c.code("NOOP") == 200
    assert os.listdir(rftpd.roots["alice"]) == []


def make_escape_links(root: Path, outside: Path):
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"outside secret")
    os.symlink("/etc", root / "esc")  # absolute, to a system directory
    os.symlink(outside, root / "out")  # absolute, to a directory we can see
    os.symlink(os.path.relpath(outside, root), root / "rel")  # relative, climbing out
    os.symlink(outside / "secret.txt", root / "secret-link.txt")  # to a file outside
    (root / "inside.txt").write_bytes(b"inside")
    os.symlink("inside.txt", root / "good-link.txt")  # stays inside: must work
    (root / "sub").mkdir()
    os.symlink("sub", root / "sub-link")


ESCAPING_COMMANDS = [
    "RETR esc/passwd", "SIZE esc/passwd", "MDTM esc/passwd", "HASH esc/passwd", "MLST esc/passwd", "CWD esc",
    "RETR out/secret.txt", "HASH out/secret.txt", "CWD out", "CWD rel", "RETR rel/secret.txt",
    "RETR secret-link.txt", "SIZE secret-link.txt", "HASH secret-link.txt", "MLST secret-link.txt",
    "MKD out/newdir", "DELE out/secret.txt", "RNFR out/secret.txt", "RMD out/..", "RMD rel",
]


def test_symlinks_out_of_the_root_are_refused(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    before = sorted(os.listdir(outside))
    c = Control(rftpd)
    c.login()
    wrong = []
    for command in ESCAPING_COMMANDS:
        if command.startswith("RETR"):
            # With a data connection ready, so only the path check can stop it.
            port = c.epsv_port()
            data = connect_data(port)
            code, text = c.cmd(command)
            data.close()
        else:
            code, text = c.cmd(command)
        if code != 550 or "outside secret" in text:
            wrong.append((command, text))
        assert c.cmd("PWD")[1] == '257 "/" is the current directory.', command
        assert sorted(os.listdir(outside)) == before, command
        assert (outside / "secret.txt").read_bytes() == b"outside secret", command
    assert wrong == [], wrong
    c.cmd("QUIT")


def test_a_root_swapped_for_a_symlink_after_start_serves_nothing_else(rftpd, tmp_path):
    """A local user who may write the root's parent directory (alice's home,
    for a root of ~/ftp) swaps the root for a link to elsewhere: the next
    login must not serve that elsewhere (daemon/SECURITY.md, "User roots")."""
    root = rftpd.roots["alice"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_bytes(b"outside secret")
    root.rename(root.with_name("alice.old"))
    root.symlink_to(elsewhere)
    c = Control(rftpd)
    assert c.code("USER alice") == 331
    assert c.cmd("PASS " + PASSWORDS["alice"])[0] == 530
    assert "was not there when rftpd started" in rftpd.log()
    c.cmd("QUIT")
    root.unlink()
    root.with_name("alice.old").rename(root)
    assert_daemon_healthy(rftpd)


def test_a_root_the_config_reaches_through_a_symlink_is_resolved_once(rftpd_factory, tmp_path):
    """Links in the configured path are the admin's choice: resolved when
    rftpd starts, and a later change of the link moves no login."""
    real, other = tmp_path / "real", tmp_path / "other"
    for d, text in ((real, b"real"), (other, b"other")):
        d.mkdir()
        (d / "which.txt").write_bytes(text)
    link = tmp_path / "link"
    link.symlink_to(real)
    d = rftpd_factory(f"anonymous: {{enabled: true, root: \"{link}\"}}\n")
    assert "event=root_resolved" in d.log()
    link.unlink()
    link.symlink_to(other)
    c = Control(d)
    assert c.code("USER anonymous") == 331
    assert c.code("PASS x") == 230
    assert retr(c, "which.txt") == b"real"
    c.cmd("QUIT")


def upload(c: Control, verb: str, target: str, payload: bytes):
    """Starts an upload with a data connection ready; returns the final reply."""
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    code, text = c.cmd(f"{verb} {target}")
    if code == 150:  # a refusal may come only once the file is opened
        data.sendall(payload)
        data.close()
        return c.reply()
    data.close()
    return code, text


def test_uploads_through_symlinks_out_of_the_root_write_nothing(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    before = {p: p.read_bytes() for p in outside.iterdir()}
    c = Control(rftpd)
    c.login()
    wrong = []
    for verb in ("STOR", "APPE"):
        for target in ("out/x", "rel/x", "out/secret.txt", "esc/rftp-escape-test"):
            code, text = upload(c, verb, target, b"escaped!")
            if code not in (550, 553):
                wrong.append((verb, target, text))
            assert {p: p.read_bytes() for p in outside.iterdir()} == before, (verb, target)
            assert not Path("/etc/rftp-escape-test").exists(), (verb, target)
    assert wrong == [], wrong
    c.cmd("QUIT")


def test_store_onto_a_link_to_an_outside_file_replaces_the_link(rftpd, tmp_path):
    """STOR writes a temporary file and renames it over the final name, so a
    link there is replaced by the new file; its target is never opened."""
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    c = Control(rftpd)
    c.login()
    assert upload(c, "STOR", "secret-link.txt", b"new content")[0] == 226
    assert not (root / "secret-link.txt").is_symlink()
    assert (root / "secret-link.txt").read_bytes() == b"new content"
    assert (outside / "secret.txt").read_bytes() == b"outside secret"
    c.cmd("QUIT")


def test_append_onto_a_link_to_an_outside_file_is_refused(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    c = Control(rftpd)
    c.login()
    code, text = upload(c, "APPE", "secret-link.txt", b"appended")
    assert (outside / "secret.txt").read_bytes() == b"outside secret"
    assert code == 550, text
    assert (root / "secret-link.txt").is_symlink()


def test_listings_of_escaping_symlinks_are_refused(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    make_escape_links(root, tmp_path / "outside")
    c = Control(rftpd)
    c.login()
    for command in ("LIST esc", "NLST esc/", "MLSD out", "LIST rel", "NLST secret-link.txt"):
        port = c.epsv_port()
        with connect_data(port) as data:
            code, text = c.cmd(command)
            data.settimeout(2)
            if code == 150:
                leaked = read_all(data)
                code, text = c.reply()
                raise AssertionError(f"{command} listed {leaked!r} then {text}")
            assert code == 550, (command, text)
    # The listing of the root shows the links themselves, never their targets' facts.
    port = c.epsv_port()
    with connect_data(port) as data:
        assert c.code("LIST") == 150
        listing = read_all(data).decode()
    assert c.reply()[0] == 226
    assert "->" not in listing and "passwd" not in listing and "outside" not in listing
    for name in ("esc", "out", "rel", "secret-link.txt"):
        assert any(l.startswith("l") and l.endswith(" " + name) for l in listing.splitlines()), (name, listing)


def test_symlinks_that_stay_inside_work(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    make_escape_links(root, tmp_path / "outside")
    c = Control(rftpd)
    c.login()
    assert retr(c, "good-link.txt") == b"inside"
    assert c.code("CWD sub-link") == 250
    c.cmd("QUIT")


def test_deleting_an_escaping_link_removes_only_the_link(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    c = Control(rftpd)
    c.login()
    assert c.code("DELE secret-link.txt") == 250
    assert not os.path.lexists(root / "secret-link.txt")
    assert (outside / "secret.txt").read_bytes() == b"outside secret"
    c.cmd("QUIT")


def test_renaming_an_escaping_link_moves_only_the_link(rftpd, tmp_path):
    root = rftpd.roots["alice"]
    outside = tmp_path / "outside"
    make_escape_links(root, outside)
    c = Control(rftpd)
    c.login()
    assert c.code("RNFR out") == 350
    assert c.code("RNTO moved-link") == 250
    assert os.readlink(root / "moved-link") == str(outside)
    assert (outside / "secret.txt").exists()


# ------------------------------------------------------------ malformed commands


def test_line_length_limit_is_exact_and_the_session_survives(rftpd):
    c = Control(rftpd)
    # 4096 bytes with CRLF is the longest accepted line; one more is too long.
    longest = "USER " + "a" * (4096 - 2 - 5)
    assert c.code(longest) == 331
    assert c.code(longest + "a") == 500
    assert c.code("X" * 5000) == 500
    assert c.code("NOOP") == 200
    c.login()
    assert c.code("NOOP") == 200


def test_one_megabyte_without_newline_gives_one_500(rftpd):
    c = Control(rftpd)
    c.login()
    c.send(b"A" * (1 << 20))
    c.send(b"\r\nNOOP\r\n")
    assert c.reply()[0] == 500
    assert c.reply()[0] == 200  # the rest of the huge line was skipped, nothing else
    assert c.code("PWD") == 257
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


def test_unknown_and_unimplemented_verbs(rftpd):
    c = Control(rftpd)
    for line in ("FOOB", "XYZZY", "12AB", "RE TR x", "\t", "", " NOOP", "N0OP"):
        assert c.code(line) == 500, repr(line)
    assert c.code("SITE CHMOD 777 x") == 502
    assert c.code("ACCT billing") == 502
    c.login()
    for line in ("FOOB", "ÄÖÜ", "SITE EXEC /bin/sh", "ACCT x", "REIN", "STOU"):
        assert c.code(line) in (500, 502), repr(line)
    assert c.code("SITE EXEC /bin/sh") == 502
    assert c.code("noop") == 200  # verbs are case-insensitive
    c.cmd("QUIT")


BAD_ARGUMENTS = [
    ("TYPE X", 504), ("TYPE", 501), ("MODE B", 504), ("MODE C", 504), ("STRU R", 504), ("STRU P", 504),
    ("REST abc", 501), ("REST -1", 501), ("REST 1e9", 501), ("REST 99999999999999999999999", 501),
    ("REST 0x10", 501), ("REST", 501), ("PORT 1,2,3", 502), ("EPRT |9|x|1|", 502),
    ("PASV now", 501), ("PWD /", 501), ("RETR", 501), ("EPSV 3", 522), ("OPTS FOO", 501),
    ("OPTS PARALLEL many", 501), ("OPTS HASH MD5", 501), ("USER again", 503), ("PASS again", 503),
]


def test_bad_arguments(rftpd):
    c = Control(rftpd)
    c.login()
    wrong = []
    for line, expected in BAD_ARGUMENTS:
        code, text = c.cmd(line)
        if code != expected:
            wrong.append((line, expected, text))
        assert c.code("NOOP") == 200, line
    assert wrong == [], wrong
    c.cmd("QUIT")


ACTIVE_MODE_ARGUMENTS = [
    ("PORT 1,2,3", 501), ("PORT 127,0,0,1,300,1", 501), ("PORT 127,0,0,1,a,b", 501),
    ("EPRT |9|x|1|", 501), ("EPRT |9|x.y.z|1|", 522), ("EPRT |1|127.0.0.1|", 501), ("EPRT |1|127.0.0.1|99999|", 501),
    ("PORT 10,0,0,1,200,1", 504), ("EPRT |1|192.0.2.1|50000|", 504), ("EPRT |1|127.0.0.2|50000|", 504),
    ("PORT 127,0,0,1,0,21", 504), ("EPRT |2|::1|50000|", 504),
]


def test_active_mode_arguments_when_enabled(rftpd_factory):
    d = rftpd_factory("active_mode: true\n")
    c = Control(d)
    c.login()
    wrong = []
    for line, expected in ACTIVE_MODE_ARGUMENTS:
        code, text = c.cmd(line)
        if code != expected:
            wrong.append((line, expected, text))
        assert c.code("NOOP") == 200, line
    assert wrong == [], wrong
    c.cmd("QUIT")


def test_active_mode_refused_by_default_and_no_bounce_when_enabled(rftpd_factory):
    d = rftpd_factory()
    c = Control(d)
    c.login()
    assert c.code("PORT 127,0,0,1,200,1") == 502
    assert c.code("EPRT |1|127.0.0.1|51201|") == 502
    c.cmd("QUIT")

    d = rftpd_factory("active_mode: true\n")
    (d.roots["alice"] / "a.bin").write_bytes(b"to the right place")
    # A bounce target: a listener on another local address that must never be contacted.
    victim = socket.socket()
    victim.bind(("127.0.0.2", 0))
    victim.listen(4)
    victim.settimeout(0.5)
    vport = victim.getsockname()[1]
    c = Control(d)
    c.login()
    assert c.code(f"PORT 127,0,0,2,{vport >> 8},{vport & 255}") == 504
    assert c.code(f"EPRT |1|127.0.0.2|{vport}|") == 504
    # The data channel was not armed: a transfer now has nowhere to go.
    assert c.code("RETR a.bin") == 425
    with pytest.raises(socket.timeout):
        victim.accept()
    victim.close()
    # The client's own address works.
    assert active_retr(c, "|1|127.0.0.1|", "a.bin") == b"to the right place"
    c.cmd("QUIT")


def active_retr(c: Control, eprt_address: str, name: str) -> bytes:
    """RETR over an active connection to a listener on 127.0.0.1, announced
    as EPRT <eprt_address><port>|."""
    with socket.socket() as mine:
        mine.bind(("127.0.0.1", 0))
        mine.listen(1)
        mine.settimeout(TIMEOUT)
        assert c.code(f"EPRT {eprt_address}{mine.getsockname()[1]}|") == 200
        assert c.code(f"RETR {name}") == 150
        conn, _ = mine.accept()
        with conn:
            data = read_all(conn)
    assert c.reply()[0] == 226
    return data


def test_eprt_with_the_clients_own_address_in_another_spelling(rftpd_factory):
    """The bounce check compares addresses, not their text: ::ffff:127.0.0.1
    is the IPv4 client's own address."""
    d = rftpd_factory("active_mode: true\n")
    (d.roots["alice"] / "a.bin").write_bytes(b"spelled differently")
    c = Control(d)
    c.login()
    assert active_retr(c, "|2|::FFFF:127.0.0.1|", "a.bin") == b"spelled differently"
    assert c.code("EPRT |2|::FFFF:127.0.0.2|50000|") == 504
    c.cmd("QUIT")


def test_epsv_all_locks_the_session_to_epsv(rftpd_factory):
    d = rftpd_factory("active_mode: true\n")
    c = Control(d)
    c.login()
    assert c.code("EPSV ALL") == 200
    assert c.code("PASV") != 227
    assert c.code("EPRT |1|127.0.0.1|50000|") != 200
    assert c.code("EPSV") == 229


def test_commands_before_login_are_refused(rftpd):
    (rftpd.roots["alice"] / "f").write_bytes(b"x")
    c = Control(rftpd)
    for line in ("RETR f", "LIST", "NLST", "PASV", "EPSV", "STOR x", "CWD /", "PWD", "MKD d", "DELE f",
                 "SIZE f", "HASH f", "REST 0", "TYPE I", "PORT 127,0,0,1,200,1", "RNFR f", "STAT", "ABOR"):
        assert c.code(line) == 530, line
    assert c.code("PASS whatever") == 503  # PASS before USER
    assert c.code("NOOP") == 200
    c.login()
    assert c.code("RNTO x") == 503  # RNTO without RNFR
    assert c.code("RNFR f") == 350
    assert c.code("NOOP") == 200
    assert c.code("RNTO g") == 503  # RNTO must follow RNFR directly
    assert (rftpd.roots["alice"] / "f").exists()
    assert sorted(os.listdir(rftpd.roots["alice"])) == ["f"]
    c.cmd("QUIT")


def test_telnet_iac_sequences_before_abor(rftpd):
    (rftpd.roots["alice"] / "huge.bin").write_bytes(os.urandom(32 * 1024 * 1024))
    c = Control(rftpd)
    c.login()
    # IAC IP IAC DM then ABOR, with no transfer running.
    c.send(b"\xff\xf4\xff\xf2ABOR\r\n")
    assert c.reply()[0] == 225
    # IAC WILL/DO options and an escaped 0xFF are not part of the verb.
    c.send(b"\xff\xfb\x01\xff\xfd\x03NOOP\r\n")
    assert c.reply()[0] == 200
    # During a download: the 426 for the transfer, then 226 for the ABOR.
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("RETR huge.bin") == 150
    assert len(data.recv(65536)) > 0
    c.send(b"\xff\xf4\xff\xf2ABOR\r\n")
    codes = [c.reply()[0], c.reply()[0]]
    rst_close(data)
    assert codes in ([426, 226], [226, 226]), codes
    assert c.code("NOOP") == 200
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


def test_urgent_abor_as_sent_by_netkit_ftp_and_lftp(rftpd):
    """Classic clients send IAC IP, then IAC DM with the TCP urgent flag
    (RFC 959 "Synch"); a receiver without SO_OOBINLINE loses the urgent byte
    from the stream, so the daemon must still recognise the ABOR."""
    c = Control(rftpd)
    c.login()
    # lftp: IAC IP IAC in-band, DM as the urgent byte, then ABOR.
    c.send(b"\xff\xf4\xff")
    c.sock.send(b"\xf2", socket.MSG_OOB)
    c.send(b"ABOR\r\n")
    code, text = c.reply()
    assert code == 225, text
    # netkit ftp: IAC IP IAC with the last IAC urgent, then DM and ABOR in-band.
    c.sock.send(b"\xff\xf4\xff", socket.MSG_OOB)
    c.send(b"\xf2ABOR\r\n")
    code, text = c.reply()
    assert code == 225, text
    c.cmd("QUIT")


# ------------------------------------------------------------ login abuse and limits


def test_wrong_passwords_close_the_session(rftpd_factory):
    # Without the per-address delay: this is about one session's count.
    d = rftpd_factory("limits: {max_login_failures: 2, failed_login_delay: 0}\n")
    c = Control(d)
    assert c.code("USER alice") == 331
    assert c.code("PASS wrong") == 530
    assert c.code("USER alice") == 331
    code, text = c.cmd("PASS wrong-again")
    assert code == 421, text
    assert c.closed_after()
    # Unknown users count as failures too, with the same reply.
    c = Control(d)
    assert c.code("USER nobody") == 331
    assert c.cmd("PASS x")[1] == "530 Login incorrect."
    assert c.code("USER nobody") == 331
    assert c.code("PASS x") == 421
    assert c.closed_after()
    # Each failure names the address it came from, for fail2ban and its kind.
    assert re.search(r"session=\d+ peer=127\.0\.0\.1 event=login_failed user=nobody", d.log()), d.log()
    assert_daemon_healthy(d)


def test_a_guesser_who_reconnects_waits_longer_at_each_wrong_password(rftpd_factory):
    """limits.failed_login_delay (daemon/SECURITY.md, "Authentication"):
    closing a session after max_login_failures alone does not slow a guesser
    who reconnects. After a wrong password every later login from the same
    address waits its turn before its password is checked, in a new session
    too, the spacing doubling up to the most; another address is not
    slowed; a login that succeeds clears its address."""
    d = rftpd_factory("limits: {failed_login_delay: 2, failed_login_max_delay: 4}\n")

    def attempt(password, source=None):
        c = Control(d, source=source)
        assert c.code("USER alice") == 331
        started = time.monotonic()
        code = c.code(f"PASS {password}")
        took = time.monotonic() - started
        c.close()
        return code, took

    code, _ = attempt("wrong")
    assert code == 530
    code, took = attempt("wrong")  # one failure so far: 2 s after it
    assert code == 530 and took >= 1.8, took
    code, took = attempt("wrong")  # two: 4 s
    assert code == 530 and took >= 3.8, took
    # Another address logs in without waiting for the guesser's turns (the
    # limit here is generous: well below the 4 s it would otherwise wait).
    code, took = attempt(PASSWORDS["alice"], source="127.0.0.2")
    assert code == 230 and took < 3, took
    # The right password from the guesser's address waits its turn too (4 s,
    # the most) and then clears the address.
    code, took = attempt(PASSWORDS["alice"])
    assert code == 230 and took >= 3.8, took
    code, took = attempt(PASSWORDS["alice"])
    assert code == 230 and took < 3, took
    assert re.search(r"peer=127\.0\.0\.1 event=login_failed user=alice failures=3 delay_s=4\b", d.log()), d.log()
    assert_daemon_healthy(d)


def test_a_first_burst_of_guesses_from_a_clean_address_takes_turns(rftpd_factory):
    """Sessions opened all at once from an address with no failure yet,
    each sending a wrong password at the same moment, take turns like any
    later guesses (daemon/SECURITY.md, "Authentication"): with the default
    config the first is checked at once, the second 1 s later, the third
    2 s after that, and a turn past the login timeout is refused at once
    (421). All of them used to get 530 within 2 s."""
    d = rftpd_factory("timeouts: {login: 60}\n")
    wait_for(lambda: "event=disconnect" in d.log(), "the start-up probe to disconnect")
    clients = [Control(d) for _ in range(8)]
    started = time.monotonic()
    for c in clients:
        c.send(b"USER alice\r\nPASS wrong\r\n")
    answered = []
    lock = threading.Lock()

    def answer(c):
        try:
            replies = [c.reply()[0], c.reply()[0]]
        except (OSError, ValueError, AssertionError):
            return  # closed below, its turn still to come
        with lock:
            answered.append((time.monotonic() - started, replies))

    readers = [threading.Thread(target=answer, args=(c,), daemon=True) for c in clients]
    for r in readers:
        r.start()
    time.sleep(2.5)
    checked = lambda: sorted(t for t, replies in answered if replies == [331, 530])  # noqa: E731
    with lock:
        early = sorted(answered)
    # Turns at 0 and 1 s (the next comes at 3 s): two checked; the rest wait
    # or, past the login timeout, are refused.
    assert len(checked()) == 2, early
    assert all(replies in ([331, 530], [331, 421]) for _, replies in early), early
    wait_for(lambda: len(checked()) >= 4, "the third and fourth turns (3 s and 7 s)", deadline_s=15)
    with lock:
        times = checked()
    assert times[2] >= 2.8 and times[3] >= 6.8, times
    log = d.log()
    # Seven waited for the first answer, then took a turn or were refused.
    assert log.count("event=login_parked") == 7, log[-3000:]
    assert log.count("event=login_delayed") + log.count("event=login_refused") == 7, log[-3000:]
    for c in clients:
        c.close()
    assert_daemon_healthy(d, source="127.0.0.2")


def test_sessions_opened_together_with_the_right_password_do_not_wait(rftpd_factory):
    """rftp -j N logs N sessions in at once. From an address with no
    failure their checks run one at a time, the others waiting for the
    first answer; the first right password lets the same user's waiting
    checks go at once: all logged in within a second. Another name's
    waiting check (a guess by whoever holds this account) is not let go
    with them: it runs after them. The checks cost what they cost in
    service, so the first is still running when the others arrive."""
    d = rftpd_factory(hashes=default_cost_hashes())
    wait_for(lambda: "event=disconnect" in d.log(), "the start-up probe to disconnect")
    clients = [Control(d) for _ in range(4)]
    guess = Control(d)
    started = time.monotonic()
    clients[0].send(f"USER alice\r\nPASS {PASSWORDS['alice']}\r\n".encode())
    time.sleep(0.01)  # the first in line; the checks behind it wait for its answer
    guess.send(b"USER bob\r\nPASS wrong\r\n")
    for c in clients[1:]:
        c.send(f"USER alice\r\nPASS {PASSWORDS['alice']}\r\n".encode())
    for c in clients:
        assert [c.reply()[0], c.reply()[0]] == [331, 230]
    took = time.monotonic() - started
    assert took < 1.5, took
    assert [guess.reply()[0], guess.reply()[0]] == [331, 530]
    log = d.log()
    assert len(re.findall(r"event=login_parked", log)) >= 3, log[-3000:]
    # bob's guess, parked before alice's last three, was checked after them.
    assert log.count("event=login access=") == 4, log[-3000:]
    assert 0 <= log.rfind("event=login access=") < log.find("event=login_failed user=bob"), log[-3000:]
    for c in clients + [guess]:
        c.close()
    assert_daemon_healthy(d, source="127.0.0.2")


def test_a_login_whose_turn_comes_after_the_login_timeout_is_refused_at_once(rftpd_factory):
    """A turn that would come after the session's login time is not booked:
    the login is refused at once with 421 saying how long to wait, rather
    than held past timeouts.login. An anonymous login, which anyone may make,
    waits its turn like any other and clears nothing."""
    d = rftpd_factory("limits: {failed_login_delay: 1, failed_login_max_delay: 8}\ntimeouts: {login: 3}\n",
                      anonymous=True)

    def attempt(user, password):
        c = Control(d)
        assert c.code(f"USER {user}") == 331
        started = time.monotonic()
        code, text = c.cmd(f"PASS {password}")
        return c, code, text, time.monotonic() - started

    c, code, _, _ = attempt("alice", "wrong")
    assert code == 530
    c.close()
    c, code, _, took = attempt("anonymous", "guest@example.org")  # its turn: 1 s after the failure
    assert code == 230 and took >= 0.8, took
    c.close()
    c, code, _, took = attempt("alice", "wrong")  # the anonymous login cleared nothing: 2 s
    assert code == 530 and took >= 1.8, took
    c.close()
    c, code, text, took = attempt("alice", PASSWORDS["alice"])  # 4 s: after the 3 s of login time
    assert code == 421 and "try again in" in text and took < 1.5, (text, took)
    assert c.closed_after()
    assert re.search(r"event=login_refused reason=\"too many failed logins from 127\.0\.0\.1\" retry_after_s=\d+",
                     d.log()), d.log()
    assert_daemon_healthy(d, source="127.0.0.2")  # another address is not held up


def test_logins_are_checked_a_few_at_a_time(rftpd_factory):
    """scrypt takes a core and 32 MiB per login: a crowd of connections
    sending passwords at once has them checked as many at a time as the
    machine has cores (at least 2), the rest queued, not one thread each
    (daemon/SECURITY.md, "Limits")."""
    cap = max(2, os.cpu_count() or 1)
    crowd = cap + 8
    # Without the per-address delay, which would space these wrong passwords
    # out (test_a_guesser_who_reconnects_waits_longer_at_each_wrong_password).
    d = rftpd_factory(f"limits: {{max_sessions: {crowd + 4}, max_sessions_per_ip: {crowd + 4}, "
                      f"failed_login_delay: 0}}\n")
    threads = lambda: len(os.listdir(f"/proc/{d.proc.pid}/task"))  # noqa: E731
    before = threads()
    clients = [Control(d) for _ in range(crowd)]
    for c in clients:
        c.send(b"USER alice\r\nPASS wrong\r\n")
    for c in clients:
        assert c.reply()[0] == 331
        assert c.reply()[0] == 530
    # Workers wait five seconds for more before they end: every one started is still there.
    assert threads() - before <= cap + 1, f"{threads() - before} threads for {crowd} logins"
    for c in clients:
        c.cmd("QUIT")
    assert_daemon_healthy(d)


def test_max_sessions_and_per_address_limits(rftpd_factory):
    d = rftpd_factory("limits: {max_sessions: 4, max_sessions_per_ip: 2}\n")
    # The fixture's own probe connection counts until the daemon has seen it go.
    wait_for(lambda: "event=disconnect" in d.log(), "the start-up probe to disconnect")
    a1, a2 = Control(d), Control(d)
    a1.login()
    # A third from the same address is refused; the first two keep working.
    extra = Control(d, greet=False)
    assert extra.reply()[0] == 421
    assert extra.closed_after()
    assert a1.code("NOOP") == 200 and a2.code("NOOP") == 200
    # Another address is still welcome, until the global limit.
    b1, b2 = Control(d, source="127.0.0.2"), Control(d, source="127.0.0.2")
    over = Control(d, source="127.0.0.3", greet=False)
    assert over.reply()[0] == 421
    assert over.closed_after()
    b1.login()
    assert retr_ok(b1, d)
    # Leaving frees the slot.
    a2.cmd("QUIT")
    a2.closed_after()
    wait_for(lambda: try_greeting(d) == 220, "a slot to free up")
    for c in (a1, b1, b2):
        assert c.code("NOOP") == 200
        c.cmd("QUIT")


def retr_ok(c, d):
    (d.roots["alice"] / "small.bin").write_bytes(b"small")
    return retr(c, "small.bin") == b"small"


def try_greeting(d) -> int:
    c = Control(d, greet=False)
    code = c.reply()[0]
    c.cmd("QUIT") if code == 220 else None
    c.close()
    return code


def test_login_timeout(rftpd_factory):
    d = rftpd_factory("timeouts: {login: 1}\n")
    c = Control(d)
    assert c.closed_after(TIMEOUT)
    assert c.buf.startswith(b"421 ")
    assert_daemon_healthy(d)


def test_login_timeout_counts_from_connect_not_from_the_last_command(rftpd_factory):
    d = rftpd_factory("timeouts: {login: 1}\n")
    c = Control(d)
    end = time.monotonic() + 3
    while time.monotonic() < end:
        try:
            code, _ = c.cmd("NOOP")
        except (ConnectionError, OSError):
            return  # closed: the login deadline held
        if code == 421:
            return
        time.sleep(0.2)
    raise AssertionError("a client that never logs in stayed connected 3 s past a 1 s login timeout")


def test_idle_timeout(rftpd_factory):
    d = rftpd_factory("timeouts: {idle: 1}\n")
    c = Control(d)
    c.login()
    assert c.closed_after(TIMEOUT)
    assert c.buf.startswith(b"421 "), c.buf
    assert_daemon_healthy(d)


def test_a_line_that_never_ends_is_no_command_for_the_idle_timeout(rftpd_factory):
    """timeouts.idle counts from the last command (docs/config.md), not the
    last byte: a logged-in session that sends one byte every half second and
    never ends its line is closed like an idle one. It used to stay open."""
    d = rftpd_factory("timeouts: {idle: 2}\n")
    c = Control(d)
    c.login()
    started = time.monotonic()
    while time.monotonic() - started < 8 and not select_readable(c.sock, 0.5):
        c.sock.send(b"N")
    assert c.closed_after(TIMEOUT), "open 8 s into a 2 s idle timeout"
    assert time.monotonic() - started < 6
    assert c.buf.startswith(b"421 Idle timeout"), c.buf
    # A command, by contrast, keeps a session open.
    c = Control(d)
    c.login()
    for _ in range(4):
        time.sleep(1)
        assert c.code("NOOP") == 200
    c.cmd("QUIT")
    assert_daemon_healthy(d)


# ------------------------------------------------------------ data connections


def test_data_port_thief_from_another_address_is_refused(rftpd):
    data = os.urandom(500_000)
    (rftpd.roots["alice"] / "t.bin").write_bytes(data)
    c = Control(rftpd)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    thief = connect_data(port, source="127.0.0.2")  # first in the queue
    mine = connect_data(port)
    assert c.code("RETR t.bin") == 150
    assert read_all(mine) == data
    mine.close()
    assert c.reply()[0] == 226
    thief.settimeout(TIMEOUT)
    try:
        stolen = read_all(thief)
    except ConnectionResetError:
        stolen = b""
    assert stolen == b""
    thief.close()
    # A thief alone gets nothing, and the real client gets 425 after the data timeout.
    c.cmd("QUIT")


def take_data_token(c) -> bytes:
    """OPTS DATATOKEN: the header every later data connection must start with."""
    code, text = c.cmd("OPTS DATATOKEN")
    assert code == 200, text
    hexdigits = text.split("DATATOKEN ")[1].strip()
    assert re.fullmatch(r"[0-9a-f]{32}", hexdigits), text
    return b"RFTPDAT1" + bytes.fromhex(hexdigits)


def test_a_thief_on_the_clients_own_host_gets_nothing_once_it_took_a_data_token(rftpd):
    """Checking the address alone lets any program on the client's host (a
    shared login node) or behind its NAT take a download or feed an upload
    by connecting to the passive port first. Once the client took a data
    token (rftp does), a passive connection is served only after showing
    it: the thief's, first in the queue, silent or with a wrong token, is
    closed and logged, and the client's own is served, listings too."""
    data = os.urandom(500_000)
    (rftpd.roots["alice"] / "t.bin").write_bytes(data)
    c = Control(rftpd)
    c.login()
    assert "DATATOKEN" in c.cmd("FEAT")[1]
    header = take_data_token(c)
    assert take_data_token(c) == header  # one per session
    c.code("TYPE I")
    # A download: one thief silent, one with a wrong token, both before the client.
    port = c.epsv_port()
    silent = connect_data(port)
    forger = connect_data(port)
    forger.sendall(b"RFTPDAT1" + bytes(16))
    mine = connect_data(port)
    mine.sendall(header)
    assert c.code("RETR t.bin") == 150
    assert read_all(mine) == data
    mine.close()
    assert c.reply()[0] == 226
    for thief in (silent, forger):
        try:
            assert read_all(thief) == b""
        except ConnectionResetError:
            pass
        thief.close()
    log = rftpd.log()
    assert re.search(r'event=data_connection_refused from=127\.0\.0\.1 reason="wrong data token', log), log
    # An upload: the thief's bytes, sent first, land nowhere.
    port = c.epsv_port()
    thief = connect_data(port)
    thief.sendall(b"RFTPDAT1" + bytes(16) + b"INJECTED")
    with connect_data(port) as mine:
        mine.sendall(header + b"genuine")
        assert c.code("STOR victim.bin") == 150
    assert c.reply()[0] == 226
    thief.close()
    assert (rftpd.roots["alice"] / "victim.bin").read_bytes() == b"genuine"
    # A listing shows the token too.
    port = c.epsv_port()
    with connect_data(port) as mine:
        mine.sendall(header)
        assert c.code("NLST") == 150
        names = read_all(mine).decode().split()
    assert c.reply()[0] == 226
    assert sorted(names) == ["t.bin", "victim.bin"]
    c.cmd("QUIT")


def test_a_flood_of_silent_connections_does_not_keep_the_client_out(rftpd):
    """A program on the client's host opens connection after connection to
    the passive port and sends nothing: rftpd holds at most 64 waiting to
    show the token, the oldest making room, so the client's own, coming
    after the flood, is still served; the log counts the refused instead
    of a line for each."""
    data = os.urandom(200_000)
    (rftpd.roots["alice"] / "t.bin").write_bytes(data)
    c = Control(rftpd)
    c.login()
    header = take_data_token(c)
    c.code("TYPE I")
    port = c.epsv_port()
    c.send(b"RETR t.bin\r\n")
    flood = [connect_data(port) for _ in range(100)]
    with connect_data(port) as mine:
        mine.sendall(header)
        code, text = c.reply()
        assert code == 150, text
        assert read_all(mine) == data
    assert c.reply()[0] == 226
    for s in flood:
        s.close()
    log = rftpd.log()
    assert len(re.findall(r"event=data_connection_refused ", log)) == 3, log
    assert re.search(r"event=data_connections_refused count=(\d+)", log), log
    c.cmd("QUIT")


def test_a_data_connection_without_the_token_is_not_served(rftpd_factory):
    """A client that took a token and then does not show it (another
    program on its host, racing it) gets no data: the transfer waits for
    the real connection and, absent that, ends with 425."""
    d = rftpd_factory("timeouts: {data: 1}\n")
    (d.roots["alice"] / "f.bin").write_bytes(b"secret")
    c = Control(d)
    c.login()
    take_data_token(c)
    port = c.epsv_port()
    with connect_data(port) as bare:
        code, text = c.cmd("RETR f.bin")
        assert code == 425, text
        try:
            assert read_all(bare) == b""
        except ConnectionResetError:
            pass
    assert_daemon_healthy(d)


def test_upload_port_thief_cannot_inject_data(rftpd_factory):
    d = rftpd_factory("timeouts: {data: 1}\n")
    c = Control(d)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    thief = connect_data(port, source="127.0.0.2")
    try:
        thief.sendall(b"INJECTED")
    except OSError:
        pass
    code, text = c.cmd("STOR victim.bin")
    assert code == 425, text
    thief.close()
    assert not (d.roots["alice"] / "victim.bin").exists()
    # The real client's transfer still works afterwards.
    port = c.epsv_port()
    with connect_data(port) as mine:
        assert c.code("STOR victim.bin") == 150
        mine.sendall(b"genuine")
    assert c.reply()[0] == 226
    assert (d.roots["alice"] / "victim.bin").read_bytes() == b"genuine"
    c.cmd("QUIT")


def test_data_connection_never_opened_gives_425(rftpd_factory):
    d = rftpd_factory("timeouts: {data: 1}\n")
    (d.roots["alice"] / "f.bin").write_bytes(b"f")
    c = Control(d)
    c.login()
    for command in ("RETR f.bin", "STOR new.bin", "LIST"):
        c.epsv_port()
        code, text = c.cmd(command)
        assert code == 425, (command, text)
        assert c.code("NOOP") == 200
    assert not (d.roots["alice"] / "new.bin").exists()
    # Without any PASV/EPSV there is no data channel at all.
    assert c.code("RETR f.bin") == 425
    c.cmd("QUIT")
    assert_daemon_healthy(d)


def test_stalled_upload_fails_after_the_data_timeout_and_keeps_the_prefix(rftpd_factory):
    d = rftpd_factory("timeouts: {data: 1}\n")
    c = Control(d)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("STOR stall.bin") == 150
    data.sendall(b"p" * 100_000)
    code, text = c.reply()  # no more bytes, no close: the server gives up
    assert code in (426, 425), text
    data.close()
    root = d.roots["alice"]
    assert not (root / "stall.bin").exists()
    assert (root / ".stall.bin.rftp-part").read_bytes() == b"p" * 100_000
    assert c.code("NOOP") == 200
    c.cmd("QUIT")


def test_download_to_a_client_that_stops_reading_fails_after_the_data_timeout(rftpd_factory):
    d = rftpd_factory("timeouts: {data: 1}\n")
    (d.roots["alice"] / "big.bin").write_bytes(os.urandom(16 * 1024 * 1024))
    c = Control(d)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = socket.socket()
    data.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    data.connect(("127.0.0.1", port))
    assert c.code("RETR big.bin") == 150
    data.recv(1000)
    c.sock.settimeout(TIMEOUT)
    code, text = c.reply()
    assert code == 426, text
    rst_close(data)
    assert c.code("NOOP") == 200
    c.cmd("QUIT")


# ------------------------------------------------------------ floods and garbage


def test_pipelined_command_flood(rftpd):
    (rftpd.roots["alice"] / "s.bin").write_bytes(b"12345")
    c = Control(rftpd)
    c.login()
    rounds = 500
    c.send(b"".join(b"NOOP\r\nPWD\r\nSIZE s.bin\r\nTYPE I\r\nSIZE none\r\n" for _ in range(rounds)))
    for i in range(rounds):
        got = [c.reply()[0] for _ in range(5)]
        assert got == [200, 257, 213, 200, 550], (i, got)
    assert c.code("NOOP") == 200
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


def test_nothing_runs_after_quit(rftpd):
    """Commands pipelined behind QUIT are not run: 221 is the last word."""
    root = rftpd.roots["alice"]
    (root / "keep.bin").write_bytes(b"still here")
    c = Control(rftpd)
    c.login()
    c.send(b"QUIT\r\nDELE keep.bin\r\nMKD made\r\n")
    assert c.reply()[0] == 221
    assert c.closed_after()
    assert c.buf == b"", c.buf
    assert (root / "keep.bin").read_bytes() == b"still here"
    assert not (root / "made").exists()
    assert_daemon_healthy(rftpd)


def test_replies_keep_their_order_behind_a_login_and_a_hash(rftpd):
    """NOOP, STAT and ABOR go ahead only of a running transfer. Behind a
    login's scrypt or a HASH they wait their turn, so a pipelining client
    pairs every reply with its command."""
    (rftpd.roots["alice"] / "h.bin").write_bytes(os.urandom(4 << 20))
    c = Control(rftpd)
    c.send(f"USER alice\r\nPASS {PASSWORDS['alice']}\r\nNOOP\r\n".encode())
    assert [c.reply()[0] for _ in range(3)] == [331, 230, 200]
    c.send(b"HASH h.bin\r\nABOR\r\nNOOP\r\n")
    assert [c.reply()[0] for _ in range(3)] == [213, 225, 200]
    c.cmd("QUIT")


def test_keepalives_behind_a_long_hash_are_not_a_flood(rftpd):
    """NOOPs queued behind a HASH (minutes, for a large file) are answered
    in order once it is done, well past the 256 other commands that may
    wait (FEAT's PIPELINE)."""
    (rftpd.roots["alice"] / "h.bin").write_bytes(os.urandom(8 << 20))
    c = Control(rftpd)
    c.login()
    c.send(b"HASH h.bin\r\n" + b"NOOP\r\n" * 300)
    assert c.reply()[0] == 213
    assert [c.reply()[0] for _ in range(300)] == [200] * 300
    c.send(b"HASH h.bin\r\n" + b"PWD\r\n" * 256)
    assert c.reply()[0] == 213
    assert [c.reply()[0] for _ in range(256)] == [257] * 256  # as many as FEAT says may wait
    c.send(b"HASH h.bin\r\n" + b"PWD\r\n" * 257)
    assert c.reply()[0] == 421  # the 257th waiting command: a flood
    assert c.closed_after()


def test_a_hash_whose_client_left_stops_reading(rftpd):
    """HASH of a large file runs off the event loop; a client that asks and
    hangs up must not leave it reading on (reconnecting in a loop would pile
    up threads and disk reads). 64 GiB of holes take SHA-256 tens of
    seconds; the file is let go far sooner."""
    with open(rftpd.roots["alice"] / "huge.bin", "wb") as f:
        f.truncate(64 << 30)
    c = Control(rftpd)
    c.login()
    c.send(b"HASH huge.bin\r\n")
    wait_for(lambda: open_files(rftpd, "huge.bin"), "the HASH to open the file")
    c.reset()
    wait_for(lambda: not open_files(rftpd, "huge.bin"), "the HASH to stop once its client left", deadline_s=5)
    assert_daemon_healthy(rftpd)


def test_a_refused_command_between_rnfr_and_rnto_ends_the_rename(rftpd):
    """RNTO must follow RNFR directly (RFC 959): a command that is refused
    (unknown, bad syntax) still comes between them."""
    root = rftpd.roots["alice"]
    (root / "a.bin").write_bytes(b"a")
    c = Control(rftpd)
    c.login()
    for between in ("FOO", "PWD x", "SIZE"):
        assert c.code("RNFR a.bin") == 350
        assert c.code(between) in (500, 501), between
        assert c.code("RNTO b.bin") == 503, between
    assert (root / "a.bin").exists() and not (root / "b.bin").exists()
    assert c.code("RNFR a.bin") == 350
    assert c.code("RNTO b.bin") == 250
    c.cmd("QUIT")


def test_stat_of_a_directory_over_its_cap_is_refused(rftpd):
    """STAT lists on the event loop, so it stops at its cap of 1000 entries
    rather than reading (and sorting) the whole directory first."""
    big = rftpd.roots["alice"] / "big"
    big.mkdir()
    for i in range(1001):
        (big / f"f{i}").touch()
    c = Control(rftpd)
    c.login()
    code, text = c.cmd("STAT big")
    assert code == 550 and "too large" in text, text
    (big / "f0").unlink()
    code, text = c.cmd("STAT big")
    assert code == 213 and text.count("\n") == 1001, text[:200]
    c.cmd("QUIT")


def test_client_that_never_reads_replies_is_cut_off(rftpd):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(TIMEOUT)
    s.connect(("127.0.0.1", rftpd.port))
    burst = b"HELP\r\n" * 10_000  # each reply is about 500 bytes
    cut_off = False
    end = time.monotonic() + 20
    while time.monotonic() < end:
        try:
            s.sendall(burst)
        except (BrokenPipeError, ConnectionResetError):
            cut_off = True
            break
        except socket.timeout:
            break  # the server stopped reading, also acceptable
    s.close()
    assert cut_off, "the daemon kept queueing replies for a client that reads nothing"
    assert_daemon_healthy(rftpd)


def test_queued_commands_behind_a_transfer_are_bounded(rftpd):
    c = Control(rftpd)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("STOR slow.bin") == 150
    data.sendall(b"x" * 1000)
    # While the upload runs, ordinary commands queue up; far too many end the session.
    try:
        c.send(b"PWD\r\n" * 1000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    assert c.closed_after()
    assert b"421 " in c.buf
    data.close()
    assert_daemon_healthy(rftpd)


def garbage(rng: random.Random, n: int) -> bytes:
    """Random bytes with some structure mixed in, so that the line reader,
    the telnet filter and the parser all see hostile input."""
    pieces = []
    while sum(map(len, pieces)) < n:
        kind = rng.randrange(6)
        if kind == 0:
            pieces.append(rng.randbytes(rng.randrange(1, 300)))
        elif kind == 1:
            pieces.append(b"\r\n" * rng.randrange(1, 3))
        elif kind == 2:
            pieces.append(bytes([255, rng.randrange(240, 256)]))
        elif kind == 3:
            verb = rng.choice([b"USER", b"PASS", b"RETR", b"STOR", b"CWD", b"LIST", b"PORT", b"EPRT", b"REST",
                               b"RNFR", b"RNTO", b"OPTS", b"MKD", b"ABOR", b"PASV", b"EPSV"])
            pieces.append(verb + b" " + rng.randbytes(rng.randrange(0, 40)) + b"\r\n")
        elif kind == 4:
            pieces.append(b"A" * rng.randrange(3000, 6000))
        else:
            pieces.append(b"\x00" * rng.randrange(1, 10) + b"\n")
    return b"".join(pieces)[:n]


def spray_garbage(d, seed: int, login: bool):
    rng = random.Random(seed)
    c = Control(d)
    if login:
        c.login()
    rst = rng.random() < 0.5
    try:
        c.send(garbage(rng, rng.randrange(2_000, 40_000)))
        if not rst:
            # Half-close and drain: the daemon answers what it read, then sees EOF.
            c.sock.shutdown(socket.SHUT_WR)
            c.sock.settimeout(TIMEOUT)
            while c.sock.recv(65536):
                pass
    except OSError:
        pass  # the daemon may close first (too many failed logins, flood)
    if rst:
        rst_close(c.sock)
    else:
        c.close()


def test_random_garbage_on_many_connections(rftpd):
    for seed in range(40):
        spray_garbage(rftpd, seed, login=seed % 2 == 1)
        assert rftpd.alive(), f"daemon died on garbage seed {seed}:\n{rftpd.log()[-3000:]}"
    assert_daemon_healthy(rftpd)


def test_concurrent_transfers_while_others_send_garbage(rftpd):
    errors = []
    payloads = {i: os.urandom(400_000 + i) for i in range(4)}

    def transfer(i):
        try:
            for round_ in range(3):
                f = ftplib.FTP()
                f.connect("127.0.0.1", rftpd.port, timeout=TIMEOUT)
                f.login("alice", PASSWORDS["alice"])
                f.storbinary(f"STOR w{i}.bin", io.BytesIO(payloads[i]))
                buf = bytearray()
                f.retrbinary(f"RETR w{i}.bin", buf.extend)
                assert hashlib.sha256(buf).digest() == hashlib.sha256(payloads[i]).digest()
                f.quit()
        except Exception as e:  # noqa: BLE001 - collected and reported below
            errors.append((i, repr(e)))

    def attack(seed):
        for k in range(6):
            spray_garbage(rftpd, 1000 + seed * 10 + k, login=k % 2 == 0)

    threads = [threading.Thread(target=transfer, args=(i,)) for i in range(4)]
    threads += [threading.Thread(target=attack, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    for i, data in payloads.items():
        assert (rftpd.roots["alice"] / f"w{i}.bin").read_bytes() == data
    assert_daemon_healthy(rftpd)


# ------------------------------------------------------------ killed clients


def test_client_killed_mid_download(rftpd):
    (rftpd.roots["alice"] / "dl.bin").write_bytes(os.urandom(16 * 1024 * 1024))
    c = Control(rftpd)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("RETR dl.bin") == 150
    assert len(data.recv(65536)) > 0
    assert open_files(rftpd, "dl.bin")
    rst_close(data)
    c.reset()
    # The transfer thread ends and lets go of the file.
    wait_for(lambda: not open_files(rftpd, "dl.bin"), "the daemon to close dl.bin")
    assert_daemon_healthy(rftpd)


@pytest.mark.parametrize("kill_control_first", [False, True])
def test_client_killed_mid_upload_leaves_the_partial_file(rftpd, kill_control_first):
    root = rftpd.roots["alice"]
    sent = os.urandom(700_000)
    c = Control(rftpd)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("STOR up.bin") == 150
    data.sendall(sent)
    wait_for(lambda: (root / ".up.bin.rftp-part").exists() and
             (root / ".up.bin.rftp-part").stat().st_size == len(sent), "the bytes to arrive")
    if kill_control_first:
        c.reset()
        rst_close(data)
    else:
        rst_close(data)
        c.reset()
    wait_for(lambda: not open_files(rftpd, ".up.bin.rftp-part"), "the daemon to close the partial file")
    assert not (root / "up.bin").exists()
    partial = (root / ".up.bin.rftp-part").read_bytes()
    assert partial == sent[:len(partial)] and len(partial) == len(sent)
    # The next session sees the partial file and resumes it.
    f = ftplib.FTP()
    f.connect("127.0.0.1", rftpd.port, timeout=TIMEOUT)
    f.login("alice", PASSWORDS["alice"])
    assert f.size(".up.bin.rftp-part") == len(sent)
    rest = os.urandom(123_456)
    f.storbinary("STOR up.bin", io.BytesIO(rest), rest=len(sent))
    assert (root / "up.bin").read_bytes() == sent + rest
    assert not (root / ".up.bin.rftp-part").exists()
    f.quit()
    assert_daemon_healthy(rftpd)


# ------------------------------------------------------------ special files and leaks


def test_fifos_and_devices_in_the_tree_cannot_hang_or_feed_a_transfer(rftpd):
    root = rftpd.roots["alice"]
    os.mkfifo(root / "fifo")
    os.mkfifo(root / ".up.bin.rftp-part")  # a FIFO where an upload's partial file would go
    try:
        os.mknod(root / "zero", 0o666 | 0o020000, os.makedev(1, 5))  # like /dev/zero
    except OSError:
        pass  # no CAP_MKNOD here; the FIFO still covers the open-without-hanging rule
    c = Control(rftpd)
    c.login()
    for name in [n for n in ("fifo", "zero") if os.path.lexists(root / n)]:
        for command in (f"RETR {name}", f"HASH {name}", f"SIZE {name}"):
            if command.startswith("RETR"):
                port = c.epsv_port()
                data = connect_data(port)
                code, text = c.cmd(command)
                data.close()
            else:
                code, text = c.cmd(command)
            assert code == 550, (command, text)
        assert upload(c, "STOR", name, b"x")[0] in (550, 553), name
    assert upload(c, "STOR", "up.bin", b"x")[0] in (550, 553)
    assert not (root / "up.bin").exists()
    assert c.code("NOOP") == 200
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


def fd_count(d) -> int:
    return len(os.listdir(f"/proc/{d.proc.pid}/fd"))


def test_passive_port_flood_does_not_leak_descriptors(rftpd):
    c = Control(rftpd)
    c.login()
    c.epsv_port()
    baseline = fd_count(rftpd)
    c.send(b"EPSV\r\nPASV\r\n" * 500)
    for _ in range(1000):
        assert c.reply()[0] in (227, 229)
    # Each new passive port replaces the previous one, which is closed.
    assert fd_count(rftpd) <= baseline + 2
    assert retr_ok(c, rftpd)
    c.cmd("QUIT")


def test_sessions_that_come_and_go_leave_no_descriptors_behind(rftpd):
    probe = Control(rftpd)  # so the count includes one live session's handles
    baseline = fd_count(rftpd)
    for seed in range(10):
        spray_garbage(rftpd, 5000 + seed, login=True)
    for _ in range(10):
        c = Control(rftpd)
        c.login()
        c.epsv_port()
        c.reset()
    wait_for(lambda: fd_count(rftpd) <= baseline, f"descriptors back to {baseline}")
    assert probe.code("NOOP") == 200
    probe.cmd("QUIT")


def test_idle_timeout_does_not_cut_a_slow_transfer(rftpd_factory):
    d = rftpd_factory("timeouts: {idle: 1}\n")
    c = Control(d)
    c.login()
    c.code("TYPE I")
    port = c.epsv_port()
    data = connect_data(port)
    assert c.code("STOR slow.bin") == 150
    # Longer than the idle timeout in total, never silent for long on the data connection.
    for _ in range(7):
        data.sendall(b"s" * 1000)
        time.sleep(0.25)
    data.close()
    code, text = c.reply()
    assert code == 226, text
    assert (d.roots["alice"] / "slow.bin").read_bytes() == b"s" * 7000
    c.cmd("QUIT")


# ------------------------------------------------------------ hostile parallel-stream frames


def _crc32c_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC32C = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli), what every parallel-stream block carries; small payloads only."""
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def frame(offset: int, payload: bytes, damaged: bool = False) -> bytes:
    """A data frame: header, payload, the payload's CRC32C (big-endian)."""
    crc = crc32c(payload)
    body = bytearray(payload)
    if damaged:
        body[len(body) // 2] ^= 0x10
    return struct.pack(">BQQ", 0x00, len(payload), offset) + bytes(body) + struct.pack(">I", crc)


def eod(size: int, count: int = 0) -> bytes:
    return struct.pack(">BQQ", 0x08, count, size)


BLOCK = 64 * 1024


def framed_upload(c: Control, name: str, streams: list[bytes]):
    """STOR with OPTS PARALLEL len(streams): one connection per byte string."""
    c.code("TYPE I")
    assert c.cmd(f"OPTS PARALLEL {len(streams)} {BLOCK}")[1] == f"200 PARALLEL {len(streams)} {BLOCK}"
    port = c.epsv_port()
    socks = [connect_data(port) for _ in streams]
    code, text = c.cmd(f"STOR {name}")
    assert code == 150, text
    for s, payload in zip(socks, streams):
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may give up on a stream early
    code, text = c.reply()
    for s in socks:
        s.close()
    c.code("OPTS PARALLEL 0")
    return code, text


A = bytes(range(256)) * 400  # 102400 bytes, position-dependent


BAD_FRAMINGS = {
    "empty data frame": ([frame(0, A[:100]) + frame(100, b"") + eod(100)], 100),
    "offset far beyond": ([frame(0, A[:100]) + frame(1 << 62, A[:10]) + eod(100)], 100),
    "EOD with a count": ([frame(0, A[:100]) + eod(100, count=5)], 100),
    "gap": ([frame(0, A[:100]) + frame(200, A[200:300]) + eod(300)], 100),
    "overlap": ([frame(0, A[:100]) + frame(50, A[50:150]) + eod(150)], 100),
    "same block twice": ([frame(0, A[:100]) + frame(0, A[:100]) + eod(100)], 100),
    "data beyond the announced end": ([frame(0, A[:100]) + eod(50)], 100),
    "EODs disagree": ([frame(0, A[:100]) + eod(100), frame(100, A[100:200]) + eod(200)], 200),
    "stream without EOD": ([frame(0, A[:100]) + eod(200), frame(100, A[100:200])], 200),
    "truncated header": ([frame(0, A[:100]) + b"\x00\x00\x00"], 100),
    "truncated payload": ([frame(0, A[:100]) + struct.pack(">BQQ", 0, 500, 100) + A[100:150]], 100),
    "a damaged block": ([frame(0, A[:100]) + frame(100, A[100:200], damaged=True) + eod(200)], 100),
    "unknown descriptor": ([frame(0, A[:100]) + struct.pack(">BQQ", 0x40, 10, 100) + A[100:110] + eod(110)], 100),
}


def test_hostile_frames_never_complete_an_upload(rftpd):
    root = rftpd.roots["alice"]
    c = Control(rftpd)
    c.login()
    wrong = []
    for i, (what, (streams, max_prefix)) in enumerate(BAD_FRAMINGS.items()):
        name = f"f{i}.bin"
        code, text = framed_upload(c, name, streams)
        partial = root / f".{name}.rftp-part"
        if code not in (426, 451) or (root / name).exists():
            wrong.append((what, text))
            continue
        # What stays is a prefix of the file that can be resumed.
        kept = partial.read_bytes() if partial.exists() else b""
        if kept != A[:len(kept)] or len(kept) > max_prefix:
            wrong.append((what, f"partial file holds {len(kept)} bytes, not a prefix of at most {max_prefix}"))
        assert c.code("NOOP") == 200, what
    assert wrong == [], wrong
    # Blocks out of order and spread over streams are fine (the positive control).
    good = [frame(BLOCK, A[BLOCK:]) + eod(len(A)), frame(0, A[:BLOCK]) + eod(len(A))]
    assert framed_upload(c, "good.bin", good)[0] == 226
    assert (root / "good.bin").read_bytes() == A
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


def test_frame_larger_than_the_negotiated_block_is_refused(rftpd):
    root = rftpd.roots["alice"]
    c = Control(rftpd)
    c.login()
    big = os.urandom(BLOCK + 1)
    code, text = framed_upload(c, "big.bin", [frame(0, big) + eod(len(big))])
    assert not (root / "big.bin").exists()
    assert code in (426, 451), text


def test_a_framed_upload_takes_no_more_than_its_allo_announced(rftpd):
    root = rftpd.roots["alice"]
    c = Control(rftpd)
    c.login()
    # ALLO holds across the data connection's setup (framed_upload's TYPE,
    # OPTS and EPSV) until the STOR.
    assert c.code(f"ALLO {len(A)}") == 200
    code, text = framed_upload(c, "within.bin", [frame(BLOCK, A[BLOCK:]) + frame(0, A[:BLOCK]) + eod(len(A))])
    assert code == 226, text
    assert (root / "within.bin").read_bytes() == A
    assert c.code("ALLO 100") == 200
    code, text = framed_upload(c, "past.bin", [frame(0, A[:200]) + eod(200)])
    assert code in (426, 451), text
    assert "beyond the allowed file size" in text, text
    assert not (root / "past.bin").exists()
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


# ------------------------------------------------------------ resend requests on a framed download


def recv_exact(sock, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError(f"closed after {len(out)} of {n} bytes")
        out += chunk
    return bytes(out)


def frames_until_eod(sock) -> list:
    """(offset, payload) of every data frame up to the next EOD; each payload's CRC32C checked."""
    frames = []
    while True:
        descriptor, count, offset = struct.unpack(">BQQ", recv_exact(sock, 17))
        if descriptor == 0x08:
            return frames
        assert descriptor == 0x00, descriptor
        payload = recv_exact(sock, count)
        assert struct.unpack(">I", recv_exact(sock, 4))[0] == crc32c(payload)
        frames.append((offset, payload))


def resend(offset: int, count: int) -> bytes:
    return struct.pack(">BQQ", 0x20, count, offset)


def echo_eod(size: int) -> bytes:
    """The receiver's word that every block of the connection arrived whole."""
    return struct.pack(">BQQ", 0x08, 0, size)


def start_framed_retrieve(c: Control, name: str):
    c.code("TYPE I")
    assert c.cmd(f"OPTS PARALLEL 1 {BLOCK}")[1] == f"200 PARALLEL 1 {BLOCK}"
    data = connect_data(c.epsv_port())
    code, text = c.cmd(f"RETR {name}")
    assert code == 150, text
    return data


def test_a_block_asked_for_again_comes_again_before_the_226(rftpd):
    (rftpd.roots["alice"] / "a.bin").write_bytes(A)
    c = Control(rftpd)
    c.login()
    data = start_framed_retrieve(c, "a.bin")
    first = dict(frames_until_eod(data))
    assert sorted(first) == [0, BLOCK]
    data.sendall(resend(BLOCK, len(A) - BLOCK))  # the second block, as if it had arrived damaged
    assert frames_until_eod(data) == [(BLOCK, A[BLOCK:])]
    # The transfer is not complete until this side says it has every block.
    c.sock.settimeout(0.5)
    with pytest.raises(socket.timeout):
        c.reply()
    c.sock.settimeout(TIMEOUT)
    data.sendall(echo_eod(len(A)))
    data.shutdown(socket.SHUT_WR)
    assert data.recv(1) == b""  # the daemon closes its side in turn
    data.close()
    code, text = c.reply()
    assert code == 226, text
    assert "blocks_resent=1" in next(l for l in rftpd.log().splitlines() if "event=transfer direction=retrieve" in l)
    c.code("OPTS PARALLEL 0")
    c.cmd("QUIT")


def test_a_download_the_client_did_not_confirm_is_not_226(rftpd):
    """A client that failed on its side (a block damaged four times, a full
    disk, ^C) closes its connections without echoing the EOD: the daemon
    must not answer 226 to a file the client does not have."""
    (rftpd.roots["alice"] / "a.bin").write_bytes(A)
    c = Control(rftpd)
    c.login()
    data = start_framed_retrieve(c, "a.bin")
    assert sorted(dict(frames_until_eod(data))) == [0, BLOCK]
    data.shutdown(socket.SHUT_WR)
    data.close()
    code, text = c.reply()
    assert code in (426, 451), text
    assert "result=ok" not in next(l for l in rftpd.log().splitlines() if "event=transfer direction=retrieve" in l)
    c.code("OPTS PARALLEL 0")
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)


BAD_REQUESTS = {
    "inside a block": resend(100, BLOCK),
    "wrong length": resend(BLOCK, 1000),
    "beyond the file": resend(4 * BLOCK, BLOCK),
    "longer than a block": resend(0, BLOCK + 1),
    "a data frame": frame(0, A[:100]),
    "one block a fourth time": resend(0, BLOCK) * 4,
    "an echo of another size": echo_eod(len(A) - 1),
}


def test_resend_requests_for_no_block_end_the_download(rftpd):
    (rftpd.roots["alice"] / "a.bin").write_bytes(A)
    c = Control(rftpd)
    c.login()
    wrong = []
    for what, request in BAD_REQUESTS.items():
        data = start_framed_retrieve(c, "a.bin")
        frames_until_eod(data)
        data.sendall(request)
        try:
            while data.recv(1 << 20):
                pass  # blocks sent again before the daemon gave up
        except ConnectionResetError:
            pass
        data.close()
        code, text = c.reply()
        if code not in (426, 451):
            wrong.append((what, text))
        assert c.code("NOOP") == 200, what
    assert wrong == [], wrong
    c.code("OPTS PARALLEL 0")
    c.cmd("QUIT")
    assert_daemon_healthy(rftpd)
