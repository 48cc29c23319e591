"""FTPS in rftpd (RFC 4217) with real clients and real TLS: curl, lftp and
Python's ftplib, a test CA made by openssl, and the refusals that keep
passwords and files off the network in clear text."""

import ftplib
import os
import signal
import socket
import ssl
import subprocess
import time

import pytest

from conftest import PASSWORDS, TESTING, Rftpd, free_port
from reusing_ftp_tls import ReusingFtpTls
from test_daemon_hostile import BLOCK, echo_eod, eod, frame, frames_until_eod, recv_exact
from tls_certs import CertAuthority, non_loopback_address, pin_of

HOST_IP = non_loopback_address()


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    ca = CertAuthority(tmp_path_factory.mktemp("ca"))
    ca.good = ca.server("good", f"DNS:localhost,IP:127.0.0.1,IP:{HOST_IP}")
    return ca


def tls_config(ca, extra=""):
    cert, key = ca.good
    return f"tls: {{certificate: \"{cert}\", key: \"{key}\"{extra}}}\n"


@pytest.fixture
def ftps(tmp_path, ca):
    """rftpd with TLS offered on loopback, implicit TLS on a second port, and
    TLS required on this host's network address."""
    implicit, network = free_port(), free_port()
    d = Rftpd(tmp_path, extra_config=tls_config(ca),
              more_listeners=f", {{address: 127.0.0.1, port: {implicit}, implicit_tls: true}}"
                             f", {{address: {HOST_IP}, port: {network}}}")
    d.implicit_port, d.network_port = implicit, network
    yield d
    assert d.alive(), d.log()
    d.stop()


def curl(ca, *args, check=True):
    r = subprocess.run(["curl", "-sS", "--cacert", str(ca.ca), *args], capture_output=True, timeout=60)
    if check:
        assert r.returncode == 0, r.stderr.decode()
    return r


def who(d, user="alice"):
    return f"{user}:{PASSWORDS[user]}"


def test_feat_lists_auth_tls_pbsz_and_prot(ftps):
    f = ftplib.FTP()
    f.connect("127.0.0.1", ftps.port)
    feat = f.sendcmd("FEAT")
    for line in (" AUTH TLS", " PBSZ", " PROT"):
        assert line in feat.splitlines()
    f.close()


def test_curl_gets_puts_lists_and_resumes_under_ssl_reqd(ftps, ca, tmp_path):
    data = os.urandom(5 << 20)
    (ftps.roots["alice"] / "a.bin").write_bytes(data)
    base = f"ftp://{who(ftps)}@localhost:{ftps.port}"
    curl(ca, "--ssl-reqd", f"{base}/a.bin", "-o", str(tmp_path / "got.bin"))
    assert (tmp_path / "got.bin").read_bytes() == data
    curl(ca, "--ssl-reqd", "-T", str(tmp_path / "got.bin"), f"{base}/up.bin")
    assert (ftps.roots["alice"] / "up.bin").read_bytes() == data
    listing = curl(ca, "--ssl-reqd", f"{base}/").stdout.decode()
    assert "a.bin" in listing and "up.bin" in listing
    # Resume a download cut at 1 MiB.
    (tmp_path / "part.bin").write_bytes(data[:1 << 20])
    curl(ca, "--ssl-reqd", "-C", "-", f"{base}/a.bin", "-o", str(tmp_path / "part.bin"))
    assert (tmp_path / "part.bin").read_bytes() == data
    log = ftps.log()
    assert log.count("data=tls") >= 4 and "result=failed" not in log
    assert "event=tls version=TLSv1.3" in log


def test_curl_implicit_ftps(ftps, ca, tmp_path):
    (ftps.roots["alice"] / "i.bin").write_bytes(b"implicit" * 1000)
    r = curl(ca, f"ftps://{who(ftps)}@localhost:{ftps.implicit_port}/i.bin")
    assert r.stdout == b"implicit" * 1000
    assert "tls=implicit" in ftps.log()


def test_lftp_with_ssl_force_and_certificate_checks(ftps, ca, tmp_path):
    (ftps.roots["alice"] / "l.bin").write_bytes(os.urandom(1 << 20))
    (tmp_path / "up.bin").write_bytes(os.urandom(300000))
    script = (f"set ssl:ca-file {ca.ca}; set ssl:verify-certificate true; set ftp:ssl-force true; "
              f"set ftp:ssl-protect-data true; set net:max-retries 1; "
              f"open -u alice,{PASSWORDS['alice']} ftp://localhost:{ftps.port}; "
              f"get l.bin -o {tmp_path / 'l.bin'}; put {tmp_path / 'up.bin'} -o lftp-up.bin; ls")
    r = subprocess.run(["lftp", "-c", script], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert (tmp_path / "l.bin").read_bytes() == (ftps.roots["alice"] / "l.bin").read_bytes()
    assert (ftps.roots["alice"] / "lftp-up.bin").read_bytes() == (tmp_path / "up.bin").read_bytes()
    assert "lftp-up.bin" in r.stdout.decode()


def ftp_tls(cls, ca, port, host="localhost"):
    f = cls(context=ssl.create_default_context(cafile=str(ca.ca)), timeout=30)
    f.connect(host, port)
    f.login("alice", PASSWORDS["alice"])
    f.prot_p()
    return f


def test_ftplib_that_resumes_the_session_is_served(ftps, ca):
    (ftps.roots["alice"] / "r.bin").write_bytes(b"x" * 100000)
    f = ftp_tls(ReusingFtpTls, ca, ftps.port)
    assert "r.bin" in f.nlst()
    got = bytearray()
    f.retrbinary("RETR r.bin", got.extend)
    assert bytes(got) == b"x" * 100000
    f.quit()


def test_stock_ftplib_which_never_resumes_is_refused_with_a_clear_reply(ftps, ca):
    f = ftp_tls(ftplib.FTP_TLS, ca, ftps.port)
    with pytest.raises((ssl.SSLError, OSError, ftplib.Error)) as failed:
        f.nlst()
    # The refusal, on the control connection, says what the data connection
    # lacked: ftplib raised it, or a TLS error came first and it is still to read.
    reply = str(failed.value)
    while not reply.startswith("522"):
        reply = f.getline()
    assert "resume the control connection's TLS session" in reply
    assert "event=data_connection_refused" in ftps.log()
    f.close()


def test_address_binding_serves_stock_ftplib(tmp_path, ca):
    d = Rftpd(tmp_path, extra_config=tls_config(ca, ", data_binding: address"))
    try:
        (d.roots["alice"] / "s.bin").write_bytes(b"stock")
        f = ftp_tls(ftplib.FTP_TLS, ca, d.port)
        got = bytearray()
        f.retrbinary("RETR s.bin", got.extend)
        assert bytes(got) == b"stock"
        f.quit()
    finally:
        d.stop()


def test_a_tls_required_listener_refuses_clear_logins_and_clear_data(ftps, ca):
    (ftps.roots["alice"] / "clear.bin").write_bytes(b"secret data")
    f = ftplib.FTP(timeout=30)
    f.connect(HOST_IP, ftps.network_port)
    with pytest.raises(ftplib.error_perm, match="530 .*AUTH TLS"):
        f.sendcmd("USER alice")
    f.close()
    t = ftplib.FTP_TLS(context=ssl.create_default_context(cafile=str(ca.ca)), timeout=30)
    t.connect(HOST_IP, ftps.network_port)
    t.login("alice", PASSWORDS["alice"])
    t.sendcmd("PBSZ 0")
    with pytest.raises(ftplib.error_perm, match="534"):
        t.sendcmd("PROT C")
    with pytest.raises(ftplib.error_perm, match="534"):
        t.sendcmd("CCC")
    t.sendcmd("TYPE I")
    t.makepasv()
    with pytest.raises(ftplib.error_perm, match="521 .*PROT P"):
        t.sendcmd("RETR clear.bin")
    t.quit()


def test_commands_pipelined_behind_auth_tls_are_not_run(ftps):
    s = socket.create_connection(("127.0.0.1", ftps.port), timeout=10)
    s.recv(1000)
    s.sendall(b"AUTH TLS\r\nUSER alice\r\n")
    reply = b""
    while not reply.endswith(b"\r\n") or b"421" not in reply:
        chunk = s.recv(1000)
        if not chunk:
            break
        reply += chunk
    assert b"421" in reply and b"234" not in reply
    s.close()


@pytest.mark.parametrize("where", ["control", "implicit", "data"])
@pytest.mark.parametrize("junk", [b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03"])
def test_garbage_and_cut_handshakes_leave_the_daemon_serving(ftps, ca, where, junk):
    if where == "control":
        s = socket.create_connection(("127.0.0.1", ftps.port), timeout=10)
        s.recv(1000)
        s.sendall(b"AUTH TLS\r\n")
        assert s.recv(1000).startswith(b"234")
    elif where == "implicit":
        s = socket.create_connection(("127.0.0.1", ftps.implicit_port), timeout=10)
    else:
        f = ftp_tls(ReusingFtpTls, ca, ftps.port)
        port = f.makepasv()[1]
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        f.putcmd("LIST")
    s.sendall(junk)
    s.close()  # a handshake cut short, or no TLS at all
    if where == "data":
        assert f.getresp().startswith("150")
        with pytest.raises(ftplib.Error, match="522"):
            f.voidresp()
        f.close()
    r = curl(ca, "--ssl-reqd", f"ftp://{who(ftps)}@localhost:{ftps.port}/")
    assert r.returncode == 0


def test_an_upload_cut_without_close_notify_is_not_put_in_place(ftps, ca):
    f = ftp_tls(ReusingFtpTls, ca, ftps.port)
    conn = f.transfercmd("STOR cut.bin")
    conn.sendall(b"y" * 200000)
    conn.close()  # no unwrap(): TCP ends, TLS never said it was done
    with pytest.raises(ftplib.Error, match="42[56]"):
        f.voidresp()
    f.quit()
    assert not (ftps.roots["alice"] / "cut.bin").exists()


def run_check(tmp_path, config):
    path = tmp_path / "check.yaml"
    path.write_text(config)
    return subprocess.run([str(TESTING / "rftpd"), "--config", str(path), "--check-config"], capture_output=True,
                          text=True, timeout=30)


def test_bad_certificates_stop_the_start_naming_the_file(tmp_path, ca):
    cert, key = ca.good
    expired = ca.server("expired", "DNS:localhost", days=-1)
    other_key = ca.server("other", "DNS:localhost")[1]
    cases = [
        (f"tls: {{certificate: \"{tmp_path}/none.pem\", key: \"{key}\"}}\n", "none.pem", "cannot read"),
        (f"tls: {{certificate: \"{cert}\", key: \"{other_key}\"}}\n", "other.key", "mismatch"),
        (f"tls: {{certificate: \"{expired[0]}\", key: \"{expired[1]}\"}}\n", "expired.pem", "has expired"),
        (f"listen: [{{address: {HOST_IP}, port: 21}}]\n", HOST_IP, "clear text"),
    ]
    for config, names, says in cases:
        r = run_check(tmp_path, config)
        assert r.returncode == 3, (config, r.stdout, r.stderr)
        assert names in r.stderr and says in r.stderr, r.stderr
    assert run_check(tmp_path, tls_config(ca)).returncode == 0


def hang_up_and_wait_for(d, event):
    d.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while event not in d.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert event in d.log()


def test_sighup_reloads_a_renewed_certificate(tmp_path, ca):
    live_cert, live_key = tmp_path / "live.pem", tmp_path / "live.key"
    live_cert.write_bytes(ca.good[0].read_bytes())
    live_key.write_bytes(ca.good[1].read_bytes())
    d = Rftpd(tmp_path / "d", extra_config=f"tls: {{certificate: \"{live_cert}\", key: \"{live_key}\"}}\n")
    try:
        base = f"ftp://{who(d)}@localhost:{d.port}/"
        curl(ca, "--ssl-reqd", "--pinnedpubkey", pin_of(ca.good[0]), base)
        renewed = ca.server("renewed", "DNS:localhost,IP:127.0.0.1")
        live_cert.write_bytes(renewed[0].read_bytes())
        live_key.write_bytes(renewed[1].read_bytes())
        hang_up_and_wait_for(d, "event=tls_reloaded")
        curl(ca, "--ssl-reqd", "--pinnedpubkey", pin_of(renewed[0]), base)
        # A broken file on the next reload keeps the certificate in use.
        live_key.write_text("not a key")
        hang_up_and_wait_for(d, "event=tls_reload_failed")
        curl(ca, "--ssl-reqd", "--pinnedpubkey", pin_of(renewed[0]), base)
        assert d.alive()
    finally:
        d.stop()


def test_kept_data_connections_keep_their_tls(ftps, ca):
    """OPTS DATAKEEP under PROT P (docs/protocol.md, "Kept data
    connections"): framed RETRs and a STOR follow each other on one data
    connection, with one TLS handshake and no close_notify between them.
    A client that then drops it fails only the next transfer."""
    root = ftps.roots["alice"]
    files = {f"f{i}.bin": os.urandom(size) for i, size in enumerate([0, 1, BLOCK + 7, 3 * BLOCK])}
    for name, body in files.items():
        (root / name).write_bytes(body)
    ctx = ssl.create_default_context(cafile=str(ca.ca))
    f = ftplib.FTP_TLS(context=ctx)
    f.connect("127.0.0.1", ftps.port)
    f.auth()
    f.login("alice", PASSWORDS["alice"])
    f.prot_p()
    f.voidcmd("TYPE I")
    assert f.sendcmd("OPTS DATAKEEP ON") == "200 DATAKEEP ON"
    assert f.sendcmd(f"OPTS PARALLEL 1 {BLOCK}") == f"200 PARALLEL 1 {BLOCK}"
    port = int(f.sendcmd("EPSV").split("|")[3])
    # rftpd's handshake follows the first transfer's 150.
    data = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30), server_hostname="127.0.0.1",
                           session=f.sock.session, do_handshake_on_connect=False)
    for name, body in files.items():
        assert f.sendcmd(f"RETR {name}").startswith("150")
        if name == "f0.bin":
            data.do_handshake()
            assert data.session_reused
        blocks = dict(frames_until_eod(data))
        got = b"".join(blocks[k] for k in sorted(blocks))
        data.sendall(echo_eod(len(got)))
        assert f.voidresp().startswith("226") and got == body, name
    up = os.urandom(2 * BLOCK + 3)
    assert f.sendcmd("STOR up.bin").startswith("150")
    data.sendall(b"".join(frame(at, up[at:at + BLOCK]) for at in range(0, len(up), BLOCK)) + eod(len(up)))
    assert recv_exact(data, 17) == echo_eod(len(up))
    assert f.voidresp().startswith("226")
    assert (root / "up.bin").read_bytes() == up
    assert ftps.log().count("command=EPSV") == 1
    data.close()
    with pytest.raises(ftplib.error_temp, match="^42[56]"):
        if f.sendcmd("RETR f1.bin").startswith("150"):
            f.voidresp()
    assert f.voidcmd("NOOP").startswith("200")
    # PROT C ends kept connections too: their TLS is no longer wanted.
    port = int(f.sendcmd("EPSV").split("|")[3])
    data = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=30), server_hostname="127.0.0.1",
                           session=f.sock.session, do_handshake_on_connect=False)
    assert f.sendcmd("RETR f1.bin").startswith("150")
    data.do_handshake()
    assert dict(frames_until_eod(data)) == {0: files["f1.bin"]}
    data.sendall(echo_eod(1))
    assert f.voidresp().startswith("226")
    assert f.sendcmd("PROT C").startswith("200")
    with pytest.raises(ftplib.error_temp, match="^425"):
        f.sendcmd("RETR f1.bin")
    f.quit()
