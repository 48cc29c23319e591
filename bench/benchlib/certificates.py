"""A throwaway CA and a server certificate signed by it, for the benches
that run rftpd (and vsftpd) under TLS."""

import subprocess
from pathlib import Path


def make_certificate(directory: Path, address: str = "127.0.0.1") -> tuple[Path, Path]:
    """(certificate, key) for address, signed by directory/ca.pem, which a
    client names as its CA bundle."""
    def run(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "2", "-subj", "/CN=rftp bench CA")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "server.key",
        "-out", "server.csr", "-subj", f"/CN={address}")
    (directory / "ext").write_text(f"subjectAltName=IP:{address}\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
        "server.pem", "-days", "2", "-extfile", "ext")
    return directory / "server.pem", directory / "server.key"
