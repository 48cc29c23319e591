"""The peer tools of the wide-area benches, beside rftpd: GridFTP, XRootD
and vsftpd serving the same tree, and their clients fetching it.

Each server listens on the bench's server address; each client runs behind
the bench's client prefix, so the path's delay applies to the peers as to
rftp. In the lab guest that is 127.0.0.1, whose packets cross the guest's
loopback device like the lab addresses' do; on the host, the delay line's
server address (tests/e2e/delay_line.py). Every client function returns
what wan_rows.measure expects: {"ok", "value" (GB/s or files/s), "error",
"streams"}.

These are Debian's packages (scripts/install-deps.sh peers); the guest sees
the host's root read-only and runs them as they are. Two of them need a
host name the guest lacks: globus-url-copy and the GridFTP server take
GLOBUS_HOSTNAME, and xrootd runs in a UTS namespace of its own named
localhost."""

import copy
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .cpu import CgroupBase
from .data import check_file, check_tree, check_tree_files, empty_dir, small_name
from .servers import Vsftpd, free_port

# The peers' anonymous or mapped user: it only reads the tree.
READER = "nobody"
CLIENT_TIMEOUT = 1800


def peer_env(addr: str) -> dict:
    return dict(os.environ, GLOBUS_HOSTNAME=addr,
                # xrdcp retries a refused connection for minutes by default.
                XRD_CONNECTIONRETRY="1", XRD_CONNECTIONWINDOW="10")


def wait_for_port(proc: subprocess.Popen, addr: str, port: int, what: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} while starting")
        try:
            with socket.create_connection((addr, port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{what} did not listen on port {port} within 30 s")


class Peers:
    """GridFTP, XRootD and vsftpd, each serving root (read-only use) on addr,
    and their clients run behind prefix, from client_addr."""

    def __init__(self, work: Path, root: Path, addr: str = "127.0.0.1", prefix: list[str] = (),
                 client_addr: str | None = None):
        self.work = work / "peers"
        self.work.mkdir()
        self.root = root
        self.addr, self.prefix = addr, list(prefix)
        self.env, self.client_env = peer_env(addr), peer_env(client_addr or addr)
        self.logs = []
        self.procs = []
        self.gridftp_port = self._start_gridftp()
        self.xrootd_port = self._start_xrootd()
        self.cgroups = CgroupBase("rftp-bench-wan")
        self.vsftpd = Vsftpd(self.cgroups.group("vsftpd"), self.work, root, address=addr)

    def direct(self) -> "Peers":
        """The same servers, fetched by clients in the servers' own
        namespace: the kernel's loopback path, without the delay line."""
        view = copy.copy(self)
        view.prefix, view.client_env = [], self.env
        return view

    def _spawn(self, name: str, argv: list[str], port: int) -> int:
        log = open(self.work / f"{name}.out", "w")
        self.logs.append(log)
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=self.env, start_new_session=True)
        self.procs.append(proc)
        wait_for_port(proc, self.addr, port, name)
        return port

    def _start_gridftp(self) -> int:
        conf = self.work / "gridftp.conf"   # keeps /etc/gridftp.conf out
        conf.write_text("log_level ERROR\n")
        port = free_port()
        return self._spawn("gridftp", [
            "globus-gridftp-server", "-c", str(conf), "-p", str(port),
            "-control-interface", self.addr, "-data-interface", self.addr, "-ipc-interface", self.addr,
            "-aa", "-anonymous-user", READER, "-port-range", "50000,50999",
            "-log-level", "error", "-logfile", str(self.work / "gridftp.log")], port)

    def _start_xrootd(self) -> int:
        port = free_port()
        admin, logs = self.work / "xrootd-admin", self.work / "xrootd-log"
        for d in (admin, logs):
            d.mkdir()
            shutil.chown(d, READER)
        conf = self.work / "xrootd.cfg"
        conf.write_text(f"xrd.port {port}\nall.role server\nall.export {self.root}\n"
                        f"all.adminpath {admin}\nall.pidpath {admin}\n")
        command = f"hostname localhost && exec xrootd -c {conf} -l {logs}/xrootd.log -n wan -R {READER}"
        return self._spawn("xrootd", ["unshare", "--uts", "sh", "-c", command], port)

    def stop(self) -> None:
        self.vsftpd.stop()
        self.cgroups.remove()
        for proc in self.procs:
            try:
                os.killpg(proc.pid, 15)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)
        for log in self.logs:
            log.close()

    # The clients. Each fetches into a fresh directory under work.

    def _run(self, argv: list[str]) -> tuple[subprocess.CompletedProcess, float]:
        start = time.monotonic()
        p = subprocess.run([*self.prefix, *argv], capture_output=True, text=True, env=self.client_env,
                           timeout=CLIENT_TIMEOUT)
        return p, time.monotonic() - start

    def _small(self, argv: list[str], down: Path, count: int) -> dict:
        p, wall = self._run(argv)
        error = (p.stderr or p.stdout)[-300:] if p.returncode else ""
        got = down
        # xrdcp -r puts the directory itself under the destination.
        if not error and (down / "small").is_dir():
            got = down / "small"
        error = error or check_tree(got, self.root / "small", count, 64 << 10, compare=False)
        shutil.rmtree(down, ignore_errors=True)
        return {"ok": not error, "value": count / wall if not error else 0.0, "error": error}

    def _large(self, argv: list[str], down: Path, size: int, streams: int) -> dict:
        p, wall = self._run(argv)
        error = (p.stderr or p.stdout)[-300:] if p.returncode else check_file(down, size, None)
        down.unlink(missing_ok=True)
        return {"ok": not error, "value": size / 1e9 / wall if not error else 0.0, "error": error,
                "streams": streams}

    def gridftp_small(self, count: int, pipelined: bool) -> dict:
        down = self.work / "small.down"
        argv = ["globus-url-copy", "-fast", "-cd", "-r", "-cc", "4", *(["-pp"] if pipelined else []),
                f"ftp://{self.addr}:{self.gridftp_port}{self.root}/small/", f"file://{down}/"]
        return self._small(argv, down, count)

    def gridftp_tree(self, count: int, pipelined: bool) -> dict:
        """The same small files as a tree of directories (data.make_tree_files)."""
        down = self.work / "tree.down"
        argv = ["globus-url-copy", "-fast", "-cd", "-r", "-cc", "4", *(["-pp"] if pipelined else []),
                f"ftp://{self.addr}:{self.gridftp_port}{self.root}/tree/", f"file://{down}/"]
        p, wall = self._run(argv)
        error = (p.stderr or p.stdout)[-300:] if p.returncode else check_tree_files(down, count, 64 << 10)
        shutil.rmtree(down, ignore_errors=True)
        return {"ok": not error, "value": count / wall if not error else 0.0, "error": error}

    def xrootd_small(self, count: int) -> dict:
        down = self.work / "small.down"
        empty_dir(down)
        argv = ["xrdcp", "-r", "-f", "-s", "--parallel", "4",
                f"root://{self.addr}:{self.xrootd_port}/{self.root}/small", f"{down}/"]
        return self._small(argv, down, count)

    def curl_small(self, count: int) -> dict:
        down = self.work / "small.down"
        empty_dir(down)
        glob = f"small/f[{small_name(0)[1:-4]}-{small_name(count - 1)[1:-4]}].bin"
        argv = ["curl", "-sS", "--fail", "--parallel", "--parallel-max", "4",
                self.vsftpd.url(glob), "-o", f"{down}/f#1.bin"]
        return self._small(argv, down, count)

    def gridftp_large(self, size: int) -> dict:
        down = self.work / "large.down"
        argv = ["globus-url-copy", "-fast", "-p", "4",
                f"ftp://{self.addr}:{self.gridftp_port}{self.root}/large.bin", f"file://{down}"]
        return self._large(argv, down, size, 4)

    def xrootd_large(self, size: int) -> dict:
        down = self.work / "large.down"
        argv = ["xrdcp", "-f", "-s", f"root://{self.addr}:{self.xrootd_port}/{self.root}/large.bin", str(down)]
        return self._large(argv, down, size, 1)

    def curl_large(self, size: int) -> dict:
        down = self.work / "large.down"
        argv = ["curl", "-sS", "--fail", "-o", str(down), self.vsftpd.url("large.bin")]
        return self._large(argv, down, size, 1)
