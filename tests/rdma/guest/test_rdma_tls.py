"""RDMA over a TLS control channel, on each lab device (rxe0, siw0): rftp
logs in inside TLS, the channel's token is bound to the TLS session, and
the RADR reply's token alone opens no channel."""

import ftplib
import hashlib
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BUILD, CONTROL_PORT, PASSWORD, Daemon, bound, lab_devices, rftp, url

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "e2e"))
from tls_certs import CertAuthority  # noqa: E402

PEER = BUILD / "rdma_peer"
TLS_PORT = CONTROL_PORT + 10


@pytest.fixture(scope="module")
def ca(tmp_path_factory):
    ca = CertAuthority(tmp_path_factory.mktemp("ca"))
    sans = ",".join(f"IP:{a}" for _, a in lab_devices())
    ca.good = ca.server("lab", sans)
    return ca


@pytest.fixture(scope="module")
def tls_daemon(tmp_path_factory, ca):
    d = Daemon(tmp_path_factory.mktemp("rftpd-tls"), [a for _, a in lab_devices()], port=TLS_PORT, tls=ca.good,
               extra_config="rdma: {require_tls: true}\n")
    yield d
    alive = d.alive()
    d.stop()
    assert alive, d.log()[-5000:]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_rdma_put_and_get_with_the_control_channel_under_tls(tls_daemon, ca, device, tmp_path):
    name, addr = device
    src = tmp_path / "src.bin"
    src.write_bytes(bytes(range(256)) * (40 * 4096 + 7))
    env = {"RFTP_CA_BUNDLE": str(ca.ca)}
    p, s = rftp("--tls", "require", "--transport", "rdma", "put", "-P", "2", str(src),
                url(addr, f"tls-{name}.bin", port=TLS_PORT), env_extra=env)
    assert s["transport"] == "rdma", p.stderr
    assert s["protection"] == {"control": "TLSv1.3", "data": "rdma"}, s
    back = tmp_path / "back.bin"
    p, s = rftp("--tls", "require", "--transport", "rdma", "get", "-P", "2", url(addr, f"tls-{name}.bin", port=TLS_PORT),
                str(back), env_extra=env)
    assert s["transport"] == "rdma", p.stderr
    assert digest(back) == digest(src)
    assert "event=tls version=TLSv1.3" in tls_daemon.log()


def test_the_radr_token_alone_opens_no_channel_under_tls(tls_daemon, ca, device):
    name, addr = device
    f = ftplib.FTP_TLS(context=ssl.create_default_context(cafile=str(ca.ca)), timeout=bound(30))
    f.connect(addr, TLS_PORT)
    f.login("alice", PASSWORD)
    reply = f.sendcmd("RADR 1 65536 4")
    assert reply.startswith("200"), reply
    fields = dict(w.split("=", 1) for w in reply.split() if "=" in w)
    before = tls_daemon.count(r"event=rdma_connection_rejected reason=\"wrong token")
    p = subprocess.run([str(PEER), "wrong-token", addr, fields["port"], fields["streams"], fields["token"]],
                       capture_output=True, text=True, timeout=bound(60))
    assert p.returncode == 0 and "refused" in p.stdout, p.stdout + p.stderr
    assert tls_daemon.count(r"event=rdma_connection_rejected reason=\"wrong token") == before + 1
    assert f.sendcmd("ABOR").startswith("225")
    f.quit()
