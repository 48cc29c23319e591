#!/usr/bin/env python3
"""`make bench-tls` (and the TLS part of `make bench`): FTPS data moved by
rftp and by vsftpd+curl over loopback, against the limit of the same run:
one core's AES-GCM and ChaCha20-Poly1305 rate from `openssl speed -evp`.

One big random file in /dev/shm moves down (to /dev/null) and up (into
tmpfs) with rftp under PROT P (1 and 4 streams), the same in clear text,
and with curl --ssl-reqd against vsftpd configured with the same
certificate (require_ssl_reuse on). Medians over the reps, round-robin.
With --doc the table goes into docs/benchmarks.md. Run as root."""

import argparse
import datetime
import errno
import os
import shutil
import socket
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import data  # noqa: E402
from benchlib.certificates import make_certificate  # noqa: E402
from benchlib.cpu import CgroupBase, wait_for_quiet  # noqa: E402
from benchlib.doc_section import replace_section  # noqa: E402
from benchlib.measure import measure  # noqa: E402
from benchlib.servers import Rftpd, Vsftpd  # noqa: E402
from tcp_bench import build_type, machine, progress  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "benchmarks.md"
BEGIN, END = "<!-- bench:tls:begin -->", "<!-- bench:tls:end -->"
CIPHERS = ("aes-128-gcm", "aes-256-gcm", "chacha20-poly1305")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("build", nargs="?", default=str(REPO / "build"))
    p.add_argument("--size-gib", type=float, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--quiet-wait", type=float, default=10)
    p.add_argument("--quick", action="store_true", help="development: 0.5 GiB, 1 rep")
    p.add_argument("--doc", choices=("yes", "no"))
    # Unknown options are tcp_bench's (make bench passes $(BENCH_ARGS) to both).
    a, _ = p.parse_known_args()
    if a.quick:
        a.size_gib, a.reps = 0.5, 1
    if a.doc is None:
        a.doc = "no" if a.quick else "yes"
    return a


def openssl_speed(cipher: str) -> float:
    """Bytes per second of one core on 16 KiB records (a TLS record's size)."""
    out = subprocess.run(["openssl", "speed", "-evp", cipher, "-seconds", "3", "-bytes", "16384"],
                         capture_output=True, text=True, check=True).stdout
    return float(out.strip().splitlines()[-1].split()[-1].rstrip("k")) * 1000


def kernel_has_ktls() -> bool:
    """As middleware/tls/ktls_probe.cpp: the "tls" TCP ULP exists (ENOTCONN) or not (ENOENT)."""
    with socket.socket() as s:
        try:
            s.setsockopt(socket.IPPROTO_TCP, 31, b"tls")  # TCP_ULP
            return True
        except OSError as e:
            return e.errno == errno.ENOTCONN


class Row:
    def __init__(self, name, what, run):
        self.name, self.what, self.run, self.samples = name, what, run, []

    def good(self):
        return [s for s in self.samples if not s.error]

    def gbps(self):
        good = self.good()
        return statistics.median(s.bytes / s.wall / 1e9 for s in good) if good else None

    def per_gb(self, attr):
        good = self.good()
        return statistics.median(getattr(s, attr) / (s.bytes / 1e9) for s in good) if good else None


def rows_for(build: Path, big: Path, up: Path, size: int, sha: str, rftpd, vsftpds: dict, ca: Path):
    """vsftpds: {True: the one requiring TLS, False: one without TLS}."""
    env = dict(os.environ, RFTP_PASSWORD=rftpd.password, RFTP_CA_BUNDLE=str(ca))
    env.pop("RFTP_TLS", None)

    def rftp(direction, streams, tls):
        def run(rep):
            data.empty_dir(up)
            where = rftpd.url("big.bin") if direction == "get" else rftpd.url("up/")
            src_dst = [where, "/dev/null"] if direction == "get" else [str(big), where]
            argv = [str(build / "rftp"), "--no-progress", "-q", "--tls", tls, "--transport", "tcp", direction,
                    "-P", str(streams), *src_dst]
            sample, _ = measure(rftpd.cpu_seconds, [argv], env=env)
            if not sample.error and direction == "put":
                sample.error = data.check_file(up / "big.bin", size, sha if rep == 0 else None)
            sample.bytes = size
            return sample
        label = "PROT P" if tls == "require" else "clear"
        return Row(f"rftp {direction} -P{streams} {label}", f"rftp -P {streams}, {label}", run)

    def curl(direction, tls):
        vsftpd = vsftpds[tls]

        def run(rep):
            data.empty_dir(up, 0o777)
            flags = ["--ssl-reqd", "--cacert", str(ca)] if tls else []
            argv = ["curl", "-sS", "--fail", *flags] + (
                ["-o", "/dev/null", vsftpd.url("big.bin")] if direction == "get" else ["-T", str(big), vsftpd.url("up/")])
            sample, _ = measure(vsftpd.cpu_seconds, [argv])
            if not sample.error and direction == "put":
                sample.error = data.check_file(up / "big.bin", size, sha if rep == 0 else None)
            sample.bytes = size
            return sample
        label = "--ssl-reqd" if tls else "clear"
        return Row(f"vsftpd+curl {direction} {label}", f"vsftpd + curl {label}", run)

    rows = []
    for direction in ("get", "put"):
        rows += [rftp(direction, 1, "require"), rftp(direction, 4, "require"), curl(direction, True),
                 rftp(direction, 1, "off"), curl(direction, False)]
    return rows


def render(args, started, build, speeds, rows) -> str:
    m = machine()
    limit = speeds["aes-256-gcm"]  # what TLS 1.3 negotiates here: TLS_AES_256_GCM_SHA384
    fmt = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"  # noqa: E731
    lines = [f"### {started:%Y-%m-%d %H:%M} — {m['nproc']} × {m['cpu']}, kernel {m['kernel']}", "",
             f"{args.size_gib:g} GiB random file in /dev/shm, {args.reps} rep(s), median; GB = 10^9 bytes. "
             f"rftp build `{build.name}` ({build_type(build)}), TLS 1.3 (TLS_AES_256_GCM_SHA384), "
             + ("kTLS in the kernel: it makes the records each side sends, OpenSSL reads them in a relay thread "
                "per data connection. " if kernel_has_ktls() else
                "kTLS not in the kernel: OpenSSL makes and reads the records in a relay thread per data connection. ")
             + "Client and server share the machine's cores.", "",
             "| limit: `openssl speed -evp`, one core, 16 KiB | GB/s |", "|---|---|"]
    lines += [f"| {c} | {speeds[c] / 1e9:.2f} |" for c in CIPHERS]
    lines += ["", "| test | what ran | GB/s | vs AES-256-GCM (1 core) | client CPU s/GB | server CPU s/GB |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        g = r.gbps()
        lines.append(f"| {r.name} | {r.what} | {fmt(g)} | {fmt(g / (limit / 1e9) if g else None)} | "
                     f"{fmt(r.per_gb('client_cpu'), 3)} | {fmt(r.per_gb('server_cpu'), 3)} |")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    replace_section(BEGIN, END, text, "TLS (FTPS)")


def main() -> int:
    args = parse_args()
    build = Path(args.build).resolve()
    if os.geteuid() != 0:
        print("tls_bench: run as root (vsftpd's anonymous login and the CPU cgroups need it)", file=sys.stderr)
        return 2
    started = datetime.datetime.now()
    base = Path(f"/dev/shm/rftp-tls-bench-{os.getpid()}")
    cgroups = CgroupBase(f"rftp-tls-bench-{os.getpid()}")
    servers = []
    try:
        root, work = base / "root", base / "work"
        root.mkdir(parents=True)
        work.mkdir()
        os.chmod(base, 0o755)
        os.chmod(root, 0o755)
        size = int(args.size_gib * (1 << 30))
        progress(f"limits: openssl speed -evp {', '.join(CIPHERS)}, one core")
        speeds = {c: openssl_speed(c) for c in CIPHERS}
        progress(f"creating {args.size_gib:g} GiB random file in {base}")
        data.make_random_file(root / "big.bin", size)
        sha = data.sha256_of(root / "big.bin")
        cert = make_certificate(work)
        rftpd = Rftpd(cgroups.group("rftpd"), work, build, root, tls=cert)
        servers.append(rftpd)
        (work / "vsftpd").mkdir()
        vsftpd = Vsftpd(cgroups.group("vsftpd"), work / "vsftpd", root, tls=cert)
        servers.append(vsftpd)
        (work / "vsftpd-clear").mkdir()
        clear = Vsftpd(cgroups.group("vsftpd-clear"), work / "vsftpd-clear", root)
        servers.append(clear)
        rows = rows_for(build, root / "big.bin", root / "up", size, sha, rftpd, {True: vsftpd, False: clear},
                        work / "ca.pem")
        for rep in range(args.reps):
            for r in rows:
                waited = wait_for_quiet(args.quiet_wait) if args.quiet_wait > 0 else 0
                progress(f"rep {rep + 1}/{args.reps}: {r.name} (waited {waited:.0f} s for quiet)")
                s = r.run(rep)
                r.samples.append(s)
                progress(f"  FAILED: {s.error}" if s.error else f"  {s.bytes / s.wall / 1e9:.2f} GB/s")
        text = render(args, started, build, speeds, rows)
        print(text)
        if args.doc == "yes":
            write_doc(text)
            progress(f"results written to {DOC}")
        return 1 if any(len(r.good()) < len(r.samples) for r in rows) else 0
    finally:
        for s in servers:
            s.stop()
        cgroups.remove()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
