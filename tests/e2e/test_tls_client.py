"""rftp over TLS against rftpd: certificate checks, the refusals that keep
a password off the network in clear text, and PROT P data both ways."""

import errno
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import PASSWORDS, TESTING, Rftpd, free_port, rounds
from vsftpd_server import VsftpdServer
from tls_certs import CertAuthority, non_loopback_address, pin_of

HOST_IP = non_loopback_address()


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    ca = CertAuthority(tmp_path_factory.mktemp("ca"))
    ca.good = ca.server("good", f"DNS:localhost,IP:127.0.0.1,IP:{HOST_IP}")
    ca.wrong_host = ca.server("wrong", "DNS:elsewhere.example")
    ca.expired = ca.server("expired", f"DNS:localhost,IP:127.0.0.1", days=-1)
    ca.self_signed = ca.self_signed("selfsigned", "DNS:localhost,IP:127.0.0.1")
    return ca


def daemon(tmp_path, pair, more_listeners=""):
    cert, key = pair
    return Rftpd(tmp_path, extra_config=f"tls: {{certificate: \"{cert}\", key: \"{key}\"}}\n",
                 more_listeners=more_listeners)


def rftp(*args, ca=None, timeout=120):
    env = dict(os.environ, RFTP_PASSWORD=PASSWORDS["alice"])
    env.pop("RFTP_TLS", None)
    if ca:
        env["RFTP_CA_BUNDLE"] = str(ca.ca)
    return subprocess.run([str(TESTING / "rftp"), "--no-progress", *args], capture_output=True, text=True, env=env,
                          timeout=timeout)


@pytest.fixture
def ftps(tmp_path, ca):
    network = free_port()
    d = daemon(tmp_path, ca.good, f", {{address: {HOST_IP}, port: {network}}}")
    d.network_port = network
    yield d
    assert d.alive(), d.log()
    d.stop()


def kernel_has_ktls() -> bool:
    """As middleware/tls/kernel_tls.cpp: the "tls" TCP upper layer exists (ENOTCONN) or not (ENOENT)."""
    with socket.socket() as s:
        try:
            s.setsockopt(socket.IPPROTO_TCP, 31, b"tls")  # TCP_ULP
        except OSError as e:
            return e.errno == errno.ENOTCONN
    return True


def summary_of(r) -> dict:
    events = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return [e for e in events if e.get("event") == "summary"][-1]


@pytest.mark.parametrize("streams", [1, 4])
def test_put_and_get_under_prot_p_on_a_tls_required_listener(ftps, ca, tmp_path, streams):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(9 << 20))
    base = f"ftp://alice@{HOST_IP}:{ftps.network_port}"
    # Who makes the records that go out: the kernel where it has kTLS
    # (tests/rdma/guest/test_ktls.py), OpenSSL in the relay otherwise.
    sender = "ktls_send" if kernel_has_ktls() else "relay"
    r = rftp("--json", "put", "-P", str(streams), "--block-size", "1M", str(src), f"{base}/up.bin", ca=ca)
    assert r.returncode == 0, r.stderr
    assert summary_of(r)["protection"] == {"control": "TLSv1.3", "data": "tls", "data_records": sender}
    assert (ftps.roots["alice"] / "up.bin").read_bytes() == src.read_bytes()
    back = tmp_path / "back.bin"
    r = rftp("--json", "get", "-P", str(streams), "--block-size", "1M", f"{base}/up.bin", str(back), ca=ca)
    assert r.returncode == 0, r.stderr
    assert summary_of(r)["protection"]["data_records"] == sender
    assert back.read_bytes() == src.read_bytes()
    r = rftp("ls", f"{base}/", ca=ca)
    assert r.returncode == 0 and "up.bin" in r.stdout, r.stderr
    log = ftps.log()
    assert log.count("data=tls") >= 3 and "result=failed" not in log
    assert f"ktls={'available' if kernel_has_ktls() else 'unavailable'}" in log
    assert log.count(f"tls_path={sender}") >= 2


def test_many_files_on_one_session_under_prot_p(ftps, ca, tmp_path):
    """One session (-j 1) for a whole tree, both ways, under PROT P: the
    listing's connection and then one kept for every file, each resuming
    the login's TLS session, which rftpd requires. A download's connection
    ends without rftp's close_notify, and must not spoil the next one's."""
    tree = ftps.roots["alice"] / "tree"
    tree.mkdir()
    want = {f"f{i:02d}.bin": os.urandom(64 << 10 if i % 2 else 1000 + i) for i in range(60)}
    for name, body in want.items():
        (tree / name).write_bytes(body)
    base = f"ftp://alice@127.0.0.1:{ftps.port}"
    down = tmp_path / "down"
    down.mkdir()
    r = rftp("-vv", "-j", "1", "get", "-r", f"{base}/tree/", str(down), ca=ca)
    assert r.returncode == 0, r.stderr
    # One handshake for the listing, one for the connection every file then
    # ran on, kept with its TLS (docs/protocol.md, "Kept data connections").
    assert r.stderr.count("data connection(s) under TLS") == 2, r.stderr[-3000:]
    assert {p.name: p.read_bytes() for p in (down / "tree").iterdir()} == want
    (ftps.roots["alice"] / "up").mkdir()
    r = rftp("-vv", "-j", "1", "put", "-r", str(down / "tree"), f"{base}/up/", ca=ca)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("data connection(s) under TLS") == 1, r.stderr[-3000:]  # kept for every file
    assert {p.name: p.read_bytes() for p in (ftps.roots["alice"] / "up" / "tree").iterdir()} == want
    assert "data_connection_refused" not in ftps.log()


def test_rftpd_under_tls_sets_up_in_fewer_round_trips(ftps, ca, tmp_path):
    """With rftpd (FEAT says PIPELINE, asked before the login): USER and
    PASS in one round; PBSZ and PROT read on the way to the next replies;
    OPTS DATAKEEP and PARALLEL with the EPSV. Each round is a round trip
    on a long path."""
    (ftps.roots["alice"] / "f.bin").write_bytes(os.urandom(3 << 20))
    r = rftp("-vv", "get", f"ftp://alice@{HOST_IP}:{ftps.network_port}/f.bin", str(tmp_path / "f.bin"), ca=ca)
    assert r.returncode == 0, r.stderr
    sent = rounds(r.stderr)
    assert sent[:3] == [["AUTH"], ["FEAT"], ["USER", "PASS"]], sent
    assert ["PBSZ", "PROT", "TYPE", "SIZE", "MDTM"] in sent, sent
    assert ["OPTS", "OPTS", "EPSV"] in sent, sent  # DATAKEEP, PARALLEL
    assert (tmp_path / "f.bin").read_bytes() == (ftps.roots["alice"] / "f.bin").read_bytes()


def test_implicit_ftps_url(tmp_path, ca):
    implicit = free_port()
    d = daemon(tmp_path, ca.good, f", {{address: 127.0.0.1, port: {implicit}, implicit_tls: true}}")
    try:
        (d.roots["alice"] / "i.bin").write_bytes(b"i" * 70000)
        out = tmp_path / "i.bin"
        r = rftp("get", f"ftps://alice@localhost:{implicit}/i.bin", str(out), ca=ca)
        assert r.returncode == 0, r.stderr
        assert out.read_bytes() == b"i" * 70000
    finally:
        d.stop()


class StubFtps(threading.Thread):
    """An FTP server that shows certificate after AUTH TLS and writes down
    whatever the client sends next (rftpd itself will not start with a
    certificate that has expired)."""

    def __init__(self, certificate: Path, key: Path, behind_234: bytes = b"", handshake: bool = True):
        super().__init__(daemon=True)
        self.behind_234 = behind_234
        self.handshake = handshake
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(certificate), str(key))
        self.heard = b""
        self.start()

    def run(self):
        conn, _ = self.listener.accept()
        conn.settimeout(20)
        conn.sendall(b"220 stub\r\n")
        if not conn.recv(100).startswith(b"AUTH TLS"):
            return
        conn.sendall(b"234 go ahead\r\n" + self.behind_234)
        if not self.handshake:
            conn.recv(4096)  # the client's hello, never answered
            conn.recv(4096)
            return
        try:
            tls = self.context.wrap_socket(conn, server_side=True)
            self.heard = tls.recv(100)
        except (ssl.SSLError, OSError):
            pass


@pytest.mark.parametrize("which,says", [("wrong_host", "mismatch"), ("expired", "expired"),
                                        ("self_signed", "self-signed")])
def test_a_certificate_rftp_cannot_trust_is_exit_3_with_the_reason(ca, which, says):
    stub = StubFtps(*getattr(ca, which))
    r = rftp("ls", f"ftp://alice@localhost:{stub.port}/", ca=ca)
    stub.join(30)
    assert r.returncode == 3, r.stderr
    assert "not accepted" in r.stderr and says in r.stderr.lower(), r.stderr
    assert stub.heard == b""  # not a byte after the handshake: no USER, no password


def test_replies_injected_in_clear_behind_the_234_are_refused(ca):
    """CVE-2021-22947 in curl: clear-text replies sent with the 234 must not
    be taken as the server's once TLS is on."""
    stub = StubFtps(*ca.good, behind_234=b"230 Logged in (injected).\r\n")
    r = rftp("ls", f"ftp://alice@localhost:{stub.port}/", ca=ca)
    stub.join(30)
    assert r.returncode == 3, r.stderr
    assert "injected" in r.stderr, r.stderr
    assert stub.heard == b""


def test_ctrl_c_during_a_handshake_that_never_ends(ca):
    stub = StubFtps(*ca.good, handshake=False)
    env = dict(os.environ, RFTP_PASSWORD=PASSWORDS["alice"], RFTP_CA_BUNDLE=str(ca.ca))
    p = subprocess.Popen([str(TESTING / "rftp"), "--no-progress", "ls", f"ftp://alice@localhost:{stub.port}/"],
                         stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    started = time.monotonic()
    _, err = p.communicate(timeout=20)
    assert time.monotonic() - started < 5, "rftp waited out its --timeout instead"
    assert p.returncode == -signal.SIGINT, err


def test_pinned_public_key(ftps, ca):
    url = f"ftp://alice@localhost:{ftps.port}/"
    assert rftp("ls", "--pinned-pubkey", pin_of(ca.good[0]), url, ca=ca).returncode == 0
    r = rftp("ls", "--pinned-pubkey", pin_of(ca.wrong_host[0]), url, ca=ca)
    assert r.returncode == 3 and "pinned" in r.stderr, r.stderr


def test_no_password_in_clear_to_the_network_unless_told(tmp_path):
    plain = free_port()
    d = Rftpd(tmp_path, more_listeners=f", {{address: {HOST_IP}, port: {plain}, allow_plaintext: true}}")
    try:
        url = f"ftp://alice@{HOST_IP}:{plain}/"
        r = rftp("ls", url)  # the default for a host that is not loopback: require
        assert r.returncode == 3 and "does not offer TLS" in r.stderr and "--tls off" in r.stderr, r.stderr
        r = rftp("ls", "--tls", "require", f"ftp://alice@localhost:{d.port}/")
        assert r.returncode == 3, r.stderr
        assert "event=login " not in d.log()
        r = rftp("ls", "--tls", "off", url)
        assert r.returncode == 0, r.stderr
        assert "clear text" in r.stderr
        # auto to a host that is not loopback: goes on, and says so.
        r = rftp("ls", "--tls", "auto", url)
        assert r.returncode == 0 and "does not offer TLS" in r.stderr and "clear text" in r.stderr, r.stderr
        # $RFTP_TLS sets the mode; a value it does not know is a usage error.
        env = dict(os.environ, RFTP_PASSWORD=PASSWORDS["alice"], RFTP_TLS="off")
        r = subprocess.run([str(TESTING / "rftp"), "ls", url], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 0 and "--tls off" in r.stderr, r.stderr
        env["RFTP_TLS"] = "maybe"
        r = subprocess.run([str(TESTING / "rftp"), "ls", url], capture_output=True, text=True, env=env, timeout=60)
        assert r.returncode == 2 and "$RFTP_TLS" in r.stderr, r.stderr
        # Loopback: TLS when offered, else plain, silently.
        r = rftp("ls", f"ftp://alice@localhost:{d.port}/")
        assert r.returncode == 0 and r.stderr == "", r.stderr
    finally:
        d.stop()


def test_rftp_against_vsftpd_with_ftps_required(tmp_path, ca):
    """vsftpd with require_ssl_reuse: rftp's data connections resume its session."""
    server = VsftpdServer(tmp_path / "ftproot", tls=ca.good).start()
    try:
        src = tmp_path / "v.bin"
        src.write_bytes(os.urandom(3 << 20))
        env = dict(os.environ, RFTP_CA_BUNDLE=str(ca.ca))
        env.pop("RFTP_TLS", None)
        def run(*a, tls="require"):
            return subprocess.run([str(TESTING / "rftp"), "--no-progress", "--tls", tls, *a], capture_output=True,
                                  text=True, env=env, timeout=120)

        r = run("put", str(src), server.url("/pub/v.bin"))
        assert r.returncode == 0, r.stderr
        assert (server.pub / "v.bin").read_bytes() == src.read_bytes()
        back = tmp_path / "back.bin"
        r = run("get", server.url("/pub/v.bin"), str(back))
        assert r.returncode == 0, r.stderr
        assert back.read_bytes() == src.read_bytes()
        r = run("-vv", "ls", server.url("/pub/"))
        assert r.returncode == 0 and "v.bin" in r.stdout, r.stderr
        # vsftpd says no PIPELINE: each line waits for the reply before it
        # (the login is anonymous here, without PASS), and FEAT is asked
        # again once logged in.
        assert rounds(r.stderr)[:6] == [["AUTH"], ["FEAT"], ["USER"], ["PBSZ"], ["PROT"], ["FEAT"]], r.stderr
        # Without TLS vsftpd refuses the login: the data above was protected.
        r = run("ls", server.url("/pub/"), tls="off")
        assert r.returncode == 4, r.stderr
    finally:
        server.stop()
