"""Certificates for the TLS tests, made with the real openssl command: a
test CA and server certificates signed by it (a good one, one for another
host, an expired one), a self-signed one, and a key that belongs to none."""

import base64
import hashlib
import socket
import subprocess
from pathlib import Path


def run(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def non_loopback_address() -> str:
    """This host's address on its default route: a listener there is not loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent
        address = s.getsockname()[0]
    assert not address.startswith("127."), f"no non-loopback address on this host ({address})"
    return address


class CertAuthority:
    def __init__(self, directory: Path):
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca = self.dir / "ca.pem"
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-days", "2", "-subj", "/CN=rftp test CA", cwd=self.dir)

    def server(self, name: str, sans: str, days: int = 2) -> tuple[Path, Path]:
        """(certificate, key) for the subjectAltName list sans, signed by the CA."""
        run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", f"/CN={name}", cwd=self.dir)
        (self.dir / f"{name}.ext").write_text(f"subjectAltName={sans}\n")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", str(days), "-extfile", f"{name}.ext", cwd=self.dir)
        return self.dir / f"{name}.pem", self.dir / f"{name}.key"

    def self_signed(self, name: str, sans: str) -> tuple[Path, Path]:
        run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={name}", "-addext",
            f"subjectAltName={sans}", cwd=self.dir)
        return self.dir / f"{name}.pem", self.dir / f"{name}.key"


def pin_of(certificate: Path) -> str:
    """curl's --pinned-pubkey form of the certificate's key."""
    key = subprocess.run(["openssl", "x509", "-in", str(certificate), "-pubkey", "-noout"], check=True,
                         capture_output=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER"], input=key, check=True,
                         capture_output=True).stdout
    return "sha256//" + base64.b64encode(hashlib.sha256(der).digest()).decode()
