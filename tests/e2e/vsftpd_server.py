"""A real vsftpd on a free loopback port, for testing rftp against a server
that knows nothing of rftp's extensions (no PARALLEL, HASH or MLST).

Anonymous login is the only one that succeeds (no local accounts are set up). vsftpd refuses a writable chroot root, so the anon root
is owned by root and read-only, and uploads go into its writable `pub/`.
"""

import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

VSFTPD = shutil.which("vsftpd") or "/usr/sbin/vsftpd"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_range(count: int) -> tuple[int, int]:
    """A run of `count` ports that are free right now, for pasv_min/max_port.
    Below the kernel's ephemeral range, where no outgoing connection (nor
    the TIME_WAIT it leaves behind) takes a port; probed with SO_REUSEADDR,
    as vsftpd binds them, so an earlier test's TIME_WAIT there is no obstacle."""
    low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    below = (max(1024, low - 12000), low - count)
    candidates = below if below[1] - below[0] > 1000 else (high + 1, 65536 - count)
    rng = random.Random()
    for _ in range(200):
        first = rng.randrange(*candidates)
        ok = True
        for p in range(first, first + count):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return first, first + count - 1
    raise RuntimeError("no free port range for passive mode")


class VsftpdServer:
    """Starts vsftpd in the foreground; stop() kills it."""

    def __init__(self, root: Path, max_rate: int = 0, tls=None):
        self.root = root  # anon_root; files live in root / "pub"
        self.pub = root / "pub"
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="rftp-vsftpd-"))
        self.max_rate = max_rate
        self.tls = tls  # (certificate, key): FTPS required, data sessions must resume (require_ssl_reuse)
        self.proc = None

    def config_text(self) -> str:
        pasv_min, pasv_max = free_port_range(20)
        empty = self.workdir / "empty"
        empty.mkdir(exist_ok=True)
        lines = {
            "listen": "YES",
            "listen_ipv6": "NO",
            "listen_address": "127.0.0.1",
            "listen_port": str(self.port),
            "background": "NO",
            "anonymous_enable": "YES",
            # Local logins are enabled only so that a non-anonymous USER gets a
            # 331 password request (and then 530), as a real site would answer.
            "local_enable": "YES",
            "no_anon_password": "YES",
            "anon_root": str(self.root),
            "write_enable": "YES",
            "anon_upload_enable": "YES",
            "anon_mkdir_write_enable": "YES",
            "anon_other_write_enable": "YES",
            "anon_world_readable_only": "NO",
            "anon_umask": "022",
            "ftp_username": "ftp",
            "pasv_enable": "YES",
            "pasv_min_port": str(pasv_min),
            "pasv_max_port": str(pasv_max),
            "port_enable": "NO",
            "connect_from_port_20": "NO",
            "secure_chroot_dir": str(empty),
            "seccomp_sandbox": "NO",
            "xferlog_enable": "NO",
            "dirmessage_enable": "NO",
            "use_localtime": "NO",
            "max_per_ip": "0",
            "max_clients": "0",
            "idle_session_timeout": "120",
            "data_connection_timeout": "120",
        }
        if self.max_rate:
            lines["anon_max_rate"] = str(self.max_rate)
        if self.tls:
            lines.update({"ssl_enable": "YES", "rsa_cert_file": str(self.tls[0]),
                          "rsa_private_key_file": str(self.tls[1]), "allow_anon_ssl": "YES",
                          "force_anon_logins_ssl": "YES", "force_anon_data_ssl": "YES",
                          "require_ssl_reuse": "YES", "ssl_sslv2": "NO", "ssl_sslv3": "NO"})
        return "".join(f"{k}={v}\n" for k, v in lines.items())

    def start(self) -> "VsftpdServer":
        self.pub.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)   # read-only root: vsftpd insists on it
        os.chmod(self.pub, 0o777)    # anonymous (user ftp) writes here
        conf = self.workdir / "vsftpd.conf"
        conf.write_text(self.config_text())
        os.chmod(conf, 0o600)        # vsftpd refuses configs others can write
        self.proc = subprocess.Popen([VSFTPD, str(conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode(errors="replace")
                raise RuntimeError(f"vsftpd exited with {self.proc.returncode}: {out}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(100).startswith(b"220"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError("vsftpd did not accept connections within 10 s")

    def url(self, path: str = "/pub/") -> str:
        return f"ftp://127.0.0.1:{self.port}{path}"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)
