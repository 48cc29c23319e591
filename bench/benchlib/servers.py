"""The servers the benchmark talks to, each started on a free loopback port
inside its own CPU group: rftpd, vsftpd and an iperf3 server."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from .cpu import CpuGroup

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "e2e"))
# vsftpd's passive range: the same choice as the tests make (below the
# ephemeral range, where thousands of small transfers' TIME_WAIT cannot crowd it).
from vsftpd_server import free_port_range  # noqa: E402


def free_port(address: str = "127.0.0.1") -> int:
    """A port nothing listens on at address (another address's listener
    may hold it: a server given it there would fail to start, and a banner
    check would then find the other one)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def listening(port: int) -> bool:
    """Whether something listens on port, without connecting to it
    (a probe connection would count as a failed test for iperf3 -s)."""
    for table in ("/proc/net/tcp",):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state = fields[1], fields[3]
            if state == "0A" and int(local.split(":")[1], 16) == port:
                return True
    return False


def wait_for_banner(proc: subprocess.Popen, port: int, what: str, banner: bytes | None,
                    address: str = "127.0.0.1", log: Path | None = None) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            said = log.read_text()[-500:] if log and log.exists() else ""
            raise RuntimeError(f"{what} exited with {proc.returncode} while starting: {said}")
        if banner is None:
            if listening(port):
                return
            time.sleep(0.05)
            continue
        try:
            with socket.create_connection((address, port), timeout=1) as s:
                if s.recv(100).startswith(banner):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not accept connections on port {port} within 10 s")


class Server:
    """A started server process in a CPU group; stop() ends exactly that process."""

    name = "server"

    def __init__(self, group: CpuGroup, workdir: Path, address: str = "127.0.0.1"):
        self.group = group
        self.workdir = workdir
        self.port = free_port(address)
        self.proc: subprocess.Popen | None = None
        self.log_path = workdir / f"{self.name}.log"

    def _spawn(self, argv: list[str]) -> None:
        self._log = open(self.log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, preexec_fn=self.group.preexec())
        self.group.attach_root(self.proc.pid)

    def cpu_seconds(self) -> float:
        return self.group.seconds()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self._log.close()
        # vsftpd session processes outlive a killed listener for a moment.
        if self.group.path is not None:
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                pids = (self.group.path / "cgroup.procs").read_text().split()
                if not pids:
                    break
                for pid in pids:
                    try:
                        os.kill(int(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.05)
        self.group.remove()


class Rftpd(Server):
    """rftpd with one read-write user whose root holds the benchmark files."""

    name = "rftpd"
    user = "alice"
    password = "bench-secret"

    def __init__(self, group: CpuGroup, workdir: Path, build: Path, root: Path, tls=None,
                 address: str = "127.0.0.1"):
        super().__init__(group, workdir, address)
        self.address = address
        tls_section = f"tls: {{certificate: \"{tls[0]}\", key: \"{tls[1]}\"}}\n" if tls else ""
        hashed = subprocess.run([str(build / "rftpd"), "--hash-password"], input=self.password + "\n",
                                capture_output=True, text=True, check=True).stdout.strip()
        # Off loopback (the wide-area bench's delay line) in clear, as the
        # peers there run: it is a path inside this machine.
        plaintext = ", allow_plaintext: true" if not address.startswith("127.") and not tls else ""
        config = workdir / "rftpd.yaml"
        config.write_text(
            f"listen: [{{address: {address}, port: {self.port}{plaintext}}}]\n"
            f"users:\n  - {{name: {self.user}, password_hash: \"{hashed}\", root: \"{root}\", access: read-write}}\n"
            "limits: {max_sessions: 256, max_sessions_per_ip: 64}\n"
            "log: {level: warning}\n" + tls_section)
        self._spawn([str(build / "rftpd"), "--config", str(config)])
        wait_for_banner(self.proc, self.port, "rftpd", b"220", address, self.log_path)

    def url(self, path: str) -> str:
        return f"rftp://{self.user}@{self.address}:{self.port}/{path.lstrip('/')}"

    def own_cpu_seconds(self) -> float:
        """The daemon process alone (all threads), as a cross-check of its cgroup."""
        from .cpu import process_seconds
        return process_seconds(self.proc.pid)


class Vsftpd(Server):
    """vsftpd with anonymous login rooted at the benchmark directory.

    vsftpd insists on a root the anonymous user cannot write, so uploads go
    into a world-writable subdirectory. The benchmark runs as root, so the
    root (owned by root, 0755) qualifies as is."""

    name = "vsftpd"

    def __init__(self, group: CpuGroup, workdir: Path, root: Path, tls=None, address: str = "127.0.0.1"):
        super().__init__(group, workdir)
        self.address = address
        empty = workdir / "vsftpd-empty"
        empty.mkdir(exist_ok=True)
        pasv_min, pasv_max = free_port_range(20)
        settings = {
            "listen": "YES", "listen_ipv6": "NO", "listen_address": address,
            "listen_port": str(self.port), "background": "NO",
            "anonymous_enable": "YES", "local_enable": "NO", "no_anon_password": "YES",
            "anon_root": str(root), "write_enable": "YES", "anon_upload_enable": "YES",
            "anon_mkdir_write_enable": "YES", "anon_other_write_enable": "YES",
            "anon_world_readable_only": "NO", "anon_umask": "022", "ftp_username": "ftp",
            "pasv_enable": "YES", "pasv_min_port": str(pasv_min), "pasv_max_port": str(pasv_max),
            "port_enable": "NO", "connect_from_port_20": "NO", "secure_chroot_dir": str(empty),
            "seccomp_sandbox": "NO", "xferlog_enable": "NO", "dirmessage_enable": "NO",
            "max_per_ip": "0", "max_clients": "0", "use_sendfile": "YES",
            "idle_session_timeout": "300", "data_connection_timeout": "300",
        }
        if tls:  # FTPS as vsftpd sites run it: required, data sessions resumed
            settings.update({"ssl_enable": "YES", "rsa_cert_file": str(tls[0]), "rsa_private_key_file": str(tls[1]),
                             "allow_anon_ssl": "YES", "force_anon_logins_ssl": "YES", "force_anon_data_ssl": "YES",
                             "require_ssl_reuse": "YES", "ssl_sslv2": "NO", "ssl_sslv3": "NO"})
        config = workdir / "vsftpd.conf"
        config.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        os.chmod(config, 0o600)  # vsftpd refuses a config others could write
        self._spawn([shutil.which("vsftpd") or "/usr/sbin/vsftpd", str(config)])
        wait_for_banner(self.proc, self.port, "vsftpd", b"220", address, self.log_path)

    def url(self, path: str) -> str:
        return f"ftp://{self.address}:{self.port}/{path.lstrip('/')}"


class Iperf3Server(Server):
    name = "iperf3"

    def __init__(self, group: CpuGroup, workdir: Path):
        super().__init__(group, workdir)
        self._spawn(["iperf3", "-s", "-B", "127.0.0.1", "-p", str(self.port)])
        wait_for_banner(self.proc, self.port, "iperf3 -s", None)
