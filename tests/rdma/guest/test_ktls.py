"""kTLS (middleware/tls/kernel_tls.h): data connections under PROT P leave
their TLS records to the kernel where it can carry them. The host kernel
has no CONFIG_TLS; the lab's kernel has, so this is where the kernel path
runs. Under TLS 1.3 OpenSSL 3.0 gives the kernel the sending side only;
under TLS 1.2 (curl --tls-max 1.2) it gives both. Every file is compared
by digest; a cut upload leaves nothing under its final name, and a
download cut while the kernel sends fails alone."""

import ftplib
import hashlib
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CONTROL_PORT, PASSWORD, Daemon, bound, lab_devices, rftp, url

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from reusing_ftp_tls import ReusingFtpTls  # noqa: E402
from tls_certs import CertAuthority  # noqa: E402

KTLS_PORT = CONTROL_PORT + 20
MiB = 1 << 20


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    ca = CertAuthority(tmp_path_factory.mktemp("ca"))
    ca.good = ca.server("lab", ",".join(f"IP:{a}" for _, a in lab_devices()))
    return ca


@pytest.fixture(scope="module")
def tls_daemon(tmp_path_factory, ca):
    d = Daemon(tmp_path_factory.mktemp("rftpd-ktls"), [lab_devices()[0][1]], port=KTLS_PORT, tls=ca.good)
    yield d
    alive = d.alive()
    d.stop()
    assert alive, d.log()[-5000:]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def transfer_lines(daemon, direction: str) -> list[str]:
    return [line for line in daemon.log().splitlines() if "event=transfer" in line and f"direction={direction}" in line]


def curl(ca, *args, **kw):
    return subprocess.run(["curl", "-sS", "--ssl-reqd", "--cacert", str(ca.ca), *args], capture_output=True,
                          timeout=bound(120), **kw)


def ftps_url(name: str) -> str:
    return f"ftp://alice:{PASSWORD}@{lab_devices()[0][1]}:{KTLS_PORT}/{name}"


def test_the_daemon_sees_that_the_kernel_has_ktls(tls_daemon):
    assert "event=tls state=on ktls=available" in tls_daemon.log()


@pytest.mark.parametrize("streams", ["1", "2"])
def test_rftp_and_rftpd_leave_their_sending_side_to_the_kernel(tls_daemon, ca, tmp_path, streams):
    # TLS 1.3: each side's kernel makes the records it sends (rftp's data on
    # put, rftpd's on get); OpenSSL reads those it receives.
    addr = lab_devices()[0][1]
    env = {"RFTP_CA_BUNDLE": str(ca.ca)}
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(3 * MiB + 7))
    name = f"up-{streams}.bin"
    _, s = rftp("--tls", "require", "--transport", "tcp", "put", "-P", streams, str(src),
                url(addr, name, port=KTLS_PORT), env_extra=env)
    assert s["protection"] == {"control": "TLSv1.3", "data": "tls", "data_records": "ktls_send"}, s
    assert digest(tls_daemon.root / name) == digest(src)
    assert "tls_path=ktls_send" in transfer_lines(tls_daemon, "store")[-1].split()

    back = tmp_path / "back.bin"
    _, s = rftp("--tls", "require", "--transport", "tcp", "get", "-P", streams, url(addr, name, port=KTLS_PORT),
                str(back), env_extra=env)
    assert s["protection"]["data_records"] == "ktls_send", s
    assert digest(back) == digest(src)
    assert "tls_path=ktls_send" in transfer_lines(tls_daemon, "retrieve")[-1].split()


def test_under_tls_1_2_the_kernel_carries_both_ways(tls_daemon, ca, tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(os.urandom(2 * MiB + 3))
    r = curl(ca, "--tls-max", "1.2", "-T", str(src), ftps_url("curl12.bin"))
    assert r.returncode == 0, r.stderr.decode()
    assert digest(tls_daemon.root / "curl12.bin") == digest(src)
    assert "tls_path=ktls" in transfer_lines(tls_daemon, "store")[-1].split()
    back = tmp_path / "back.bin"
    r = curl(ca, "--tls-max", "1.2", ftps_url("curl12.bin"), "-o", str(back))
    assert r.returncode == 0, r.stderr.decode()
    assert digest(back) == digest(src)
    assert "tls_path=ktls" in transfer_lines(tls_daemon, "retrieve")[-1].split()


def test_an_upload_cut_where_the_kernel_reads_is_not_put_in_place(tls_daemon, ca):
    context = ssl.create_default_context(cafile=str(ca.ca))
    context.maximum_version = ssl.TLSVersion.TLSv1_2  # so the kernel reads rftpd's side
    f = ReusingFtpTls(context=context, timeout=bound(30))
    f.connect(lab_devices()[0][1], KTLS_PORT)
    f.login("alice", PASSWORD)
    f.prot_p()
    conn = f.transfercmd("STOR cut.bin")
    conn.sendall(os.urandom(300000))
    conn.close()  # no unwrap(): TCP ends, TLS never said it was done
    with pytest.raises(ftplib.Error, match="426"):
        f.voidresp()
    f.quit()
    assert not (tls_daemon.root / "cut.bin").exists()
    line = transfer_lines(tls_daemon, "store")[-1]
    assert "tls_path=ktls" in line.split() and "close_notify" in line, line


def test_a_download_cut_where_the_kernel_sends_fails_alone(tls_daemon, ca):
    (tls_daemon.root / "long.bin").write_bytes(os.urandom(32 * MiB))
    f = ReusingFtpTls(context=ssl.create_default_context(cafile=str(ca.ca)), timeout=bound(30))
    f.connect(lab_devices()[0][1], KTLS_PORT)
    f.login("alice", PASSWORD)
    f.prot_p()
    conn = f.transfercmd("RETR long.bin")
    got = 0
    while got < MiB:
        got += len(conn.recv(65536))
    conn.close()  # mid-file, with no close_notify: rftpd's kernel socket meets a reset
    with pytest.raises(ftplib.Error, match="42[56]"):
        f.voidresp()
    line = transfer_lines(tls_daemon, "retrieve")[-1]
    assert "tls_path=ktls_send" in line.split() and "result=ok" not in line, line
    # The session and the daemon go on.
    (tls_daemon.root / "after.bin").write_bytes(b"served" * 1000)
    chunks = []
    f.retrbinary("RETR after.bin", chunks.append)
    assert b"".join(chunks) == b"served" * 1000
    f.quit()
