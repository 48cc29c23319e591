#!/usr/bin/env python3
"""make bench-wan-tcp, on the host: rftp over TCP at round trips of 0, 10
and 50 ms, beside GridFTP, XRootD and vsftpd+curl in the same run.

The host's kernel has no netem. The servers listen in the root network
namespace; the clients run in a namespace of their own, joined to it by a
userspace delay line (tests/e2e/delay_line.py) that holds each packet half
the round trip. The round trip is measured as TCP handshakes to rftpd.

Rows, each the median of --runs runs, with each tool's default settings:
- the limits: iperf3 -Z -R moving the large file's bytes over one stream
  through the same line, and a local `cp -r` of the small-file tree;
- the small files for rftp and the peers on plain loopback (round trip
  "0, no line"): the clients beside the servers, no delay line;
- rftp: one large file `get` and many small files `get -r -j 4`, flat
  and as a tree (10 files in each of 100 directories under 10 parents);
- the peers: GridFTP (`globus-url-copy -r -cc 4`, with and without `-pp`,
  on the flat set and the tree;
  `-p 4` for the large file), XRootD (`xrdcp -r --parallel 4`; `xrdcp`),
  vsftpd+curl (`--parallel-max 4`; one `curl`);
- the large file at 50 ms with -P 1, 2 and 4 (--streams), and at 50 ms
  with 0.01 % loss;
- rftp alone with a longer file (--long-mib, 2048 MiB) at 0 and 50 ms:
  a large file long enough that slow start and set-up are a small part;
  and both files into /dev/null, where the client writes nothing. Each
  destination's two sizes give the rate beyond set-up and slow start;
- rftp alone under TLS (path "tls": a second rftpd with a certificate,
  `--tls require`, PROT P): the large file and the small files at each
  round trip.
Writes the table between the bench-wan-tcp markers of docs/benchmarks.md
unless --doc no. Run as root: it makes a network namespace and devices."""

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from benchlib.certificates import make_certificate  # noqa: E402
from benchlib.cpu import CgroupBase  # noqa: E402
from delay_line import CLIENT_ADDR, CLIENT_PREFIX, MTU, SERVER_ADDR, DelayLine  # noqa: E402
from benchlib.servers import Rftpd  # noqa: E402
from benchlib.wan_peers import Peers  # noqa: E402
from tcp_bench import machine  # noqa: E402
from benchlib.wan_rows import (LOOPBACK, MiB, RTTS_MS, RftpClient, common_arguments, iperf3_get, measure,  # noqa: E402
                               measure_peers, measured_rtt_ms, prepare, publish, write_large_file)

MARK_BEGIN, MARK_END = "<!-- bench-wan-tcp:results:begin -->", "<!-- bench-wan-tcp:results:end -->"


def local_copy(source: Path, count: int, work: Path) -> dict:
    """The small files' limit: `cp -r` of the tree, tmpfs to tmpfs."""
    down = work / "small.copy"
    start = time.monotonic()
    subprocess.run(["cp", "-r", str(source), str(down)], check=True)
    wall = time.monotonic() - start
    shutil.rmtree(down)
    return {"ok": True, "value": count / wall, "error": ""}


def tcp_ceilings() -> str:
    """The third fields of tcp_rmem and tcp_wmem, which bound one stream's window."""
    fields = [f"`{key}` {int(Path('/proc/sys/net/ipv4', key).read_text().split()[2]) >> 20} MiB"
              for key in ("tcp_rmem", "tcp_wmem")]
    return " and ".join(fields) + " ceilings"


def describe(a, rtts: dict) -> tuple[str, str]:
    m = machine()
    heading = f"{platform.node()}, {m['nproc']} × {m['cpu']}, kernel {m['kernel']}, userspace delay line"
    longer = (f" Longer file (rftp alone): {a.long_mib} MiB; rftp's rows marked /dev/null write nothing at the "
              "client." if a.long_mib else "")
    text = (f"Large file: {a.large_mib} MiB, tmpfs to tmpfs.{longer} Small files: {a.small_files} × 64 KiB, "
            f"`-j 4`, in one directory, and again as a tree (10 a directory, {a.small_files // 10} directories "
            "under 10 parents). "
            "Each tool's default settings, over TCP from a client network namespace to servers in the root "
            f"namespace, through the delay line (MTU {MTU}, segmentation offload, no bandwidth limit; it runs "
            f"on the same two cores). Median of {a.runs} runs. GB = 10^9 bytes. Round trips measured as TCP "
            "handshakes: " + ", ".join(f"{k} ms → {v:.1f} ms" for k, v in rtts.items()) + ". "
            f"Host TCP buffers: this host's, the same on both sides ({tcp_ceilings()}).")
    return heading, text


def tls_rows(a, rows: list, label: dict, tls_rftpd: Rftpd, work: Path, root: Path) -> None:
    """rftp under TLS at the line's round trip: the large file, then the
    small files."""
    rftp = RftpClient(Path(a.build), Rftpd.password, CLIENT_PREFIX, tls="require", ca=work / "ca.pem")
    url = f"rftp://{Rftpd.user}@{SERVER_ADDR}:{tls_rftpd.port}"
    measure(rows, a.runs, dict(label, path="tls", test="large file get"), rftp.large_get, url, "tcp",
            a.large_mib * MiB, work)
    measure(rows, a.runs, dict(label, path="tls", test="small files get -r -j 4"),
            rftp.small_get, url, "tcp", a.small_files, work, root / "small")


def long_rows(a, rows: list, label: dict, rftp: RftpClient, url: str, work: Path) -> None:
    """rftp alone: the longer file, then both files into /dev/null, where
    the client writes nothing. Two sizes per destination let set-up and
    slow start cancel (wan_rows.beyond_set_up)."""
    long_size = a.long_mib * MiB
    measure(rows, a.runs, dict(label, path="tcp", test=f"large file get, {a.long_mib} MiB"),
            lambda: rftp.large_get(url, "tcp", long_size, work, name="long.bin"))
    measure(rows, a.runs, dict(label, path="tcp", test="large file get, /dev/null"),
            lambda: rftp.large_get(url, "tcp", a.large_mib * MiB, work, discard=True))
    measure(rows, a.runs, dict(label, path="tcp", test=f"large file get, {a.long_mib} MiB, /dev/null"),
            lambda: rftp.large_get(url, "tcp", long_size, work, name="long.bin", discard=True))


def loopback_rows(a, rows: list, url: str, peers: Peers | None, work: Path, root: Path) -> None:
    """The small files with the clients beside the servers: the kernel's
    loopback path, no delay line. The line relays every packet through one
    process on the same two cores, which at 0 ms costs each tool per
    packet; these rows show the tools without it."""
    label = {"rtt": LOOPBACK, "tcp": "default"}
    rftp = RftpClient(Path(a.build), Rftpd.password, [], tls="off")
    measure(rows, a.runs, dict(label, path="tcp", test="small files get -r -j 4"),
            rftp.small_get, url, "tcp", a.small_files, work, root / "small")
    measure(rows, a.runs, dict(label, path="tcp", test="tree get -r -j 4"),
            rftp.tree_get, url, "tcp", a.small_files, work)
    if not peers:
        return
    direct = peers.direct()
    for path, test, fn, *args in (
            ("GridFTP", "small files -r -cc 4", direct.gridftp_small, a.small_files, False),
            ("GridFTP", "small files -r -cc 4 -pp", direct.gridftp_small, a.small_files, True),
            ("XRootD", "small files -r --parallel 4", direct.xrootd_small, a.small_files),
            ("vsftpd+curl", "small files --parallel-max 4", direct.curl_small, a.small_files),
            ("GridFTP", "tree -r -cc 4", direct.gridftp_tree, a.small_files, False),
            ("GridFTP", "tree -r -cc 4 -pp", direct.gridftp_tree, a.small_files, True)):
        measure(rows, a.runs, dict(label, path=path, test=test), fn, *args)


def run_rows(a, line: DelayLine, rftpd: Rftpd, tls_rftpd: Rftpd | None, peers: Peers | None, work: Path,
             root: Path) -> tuple[list, dict]:
    size = a.large_mib * MiB
    # In clear, as the peers and iperf3 here; rftp under TLS has rows of its own.
    rftp = RftpClient(Path(a.build), Rftpd.password, CLIENT_PREFIX, tls="off")
    url = f"rftp://{Rftpd.user}@{SERVER_ADDR}:{rftpd.port}"
    rows, rtts = [], {}
    measure(rows, a.runs, {"rtt": 0, "tcp": "default", "path": "cp -r", "test": "small files, local copy"},
            local_copy, root / "small", a.small_files, work)
    loopback_rows(a, rows, url, peers, work, root)
    for rtt in a.rtts:
        line.set(rtt)
        rtts[rtt] = measured_rtt_ms(SERVER_ADDR, rftpd.port, CLIENT_PREFIX)
        label = {"rtt": rtt, "tcp": "default"}
        measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"),
                iperf3_get, SERVER_ADDR, size, CLIENT_PREFIX)
        measure(rows, a.runs, dict(label, path="tcp", test="large file get"), rftp.large_get, url, "tcp", size, work)
        measure(rows, a.runs, dict(label, path="tcp", test="small files get -r -j 4"),
                rftp.small_get, url, "tcp", a.small_files, work, root / "small")
        measure(rows, a.runs, dict(label, path="tcp", test="tree get -r -j 4"),
                rftp.tree_get, url, "tcp", a.small_files, work)
        if peers:
            measure_peers(rows, a.runs, label, peers, size, a.small_files)
            for pipelined in (False, True):
                measure(rows, a.runs, dict(label, path="GridFTP", test="tree -r -cc 4" + (" -pp" if pipelined else "")),
                        peers.gridftp_tree, a.small_files, pipelined)
        if a.long_mib and rtt in (0, 50):
            long_rows(a, rows, label, rftp, url, work)
        if tls_rftpd:
            tls_rows(a, rows, label, tls_rftpd, work, root)
    line.set(50)
    for n in a.streams:
        measure(rows, a.runs, {"rtt": 50, "tcp": "default", "path": "tcp", "test": f"large file get -P {n}",
                               "base": "large file get"}, rftp.large_get, url, "tcp", size, work, "-P", str(n))
    line.set(50, 0.01)
    rtts["50+loss"] = measured_rtt_ms(SERVER_ADDR, rftpd.port, CLIENT_PREFIX)
    label = {"rtt": "50, 0.01 % loss", "tcp": "default"}
    measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, SERVER_ADDR, size,
            CLIENT_PREFIX)
    measure(rows, a.runs, dict(label, path="tcp", test="large file get"), rftp.large_get, url, "tcp", size, work)
    return rows, rtts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build", nargs="?", default=str(ROOT / "build"))
    common_arguments(ap, small_files=1000, streams=[1, 2, 4])
    ap.add_argument("--long-mib", type=int, default=2048,
                    help="rftp's rows with a longer file at 0 and 50 ms (0: none)")
    ap.add_argument("--rtts", type=lambda t: [int(x) for x in t.split(",") if x], default=list(RTTS_MS),
                    help="round trips in ms (default 0,10,50)")
    ap.add_argument("--tls", default="yes", help="rftp's rows under TLS (yes/no)")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rftp-wan-tcp-", dir="/dev/shm"))
    root = work / "alice"
    root.mkdir()
    prepare(root, a.large_mib, a.small_files, tree=True)
    if a.long_mib:
        write_large_file(root / "long.bin", a.long_mib)
    cgroups = CgroupBase("rftp-bench-wan-tcp")
    line = DelayLine()
    rftpd = tls_rftpd = peers = None
    try:
        rftpd = Rftpd(cgroups.group("rftpd"), work, Path(a.build), root, address=SERVER_ADDR)
        if a.tls == "yes":
            (work / "tls").mkdir()
            tls_rftpd = Rftpd(cgroups.group("rftpd-tls"), work / "tls", Path(a.build), root, address=SERVER_ADDR,
                              tls=make_certificate(work, SERVER_ADDR))
        peers = Peers(work, root, SERVER_ADDR, CLIENT_PREFIX, CLIENT_ADDR) if a.peers == "yes" else None
        rows, rtts = run_rows(a, line, rftpd, tls_rftpd, peers, work, root)
    finally:
        for server in (peers, tls_rftpd, rftpd):
            if server:
                server.stop()
        cgroups.remove()
        line.close()
        shutil.rmtree(work, ignore_errors=True)
    return publish(rows, *describe(a, rtts), a.doc, (MARK_BEGIN, MARK_END),
                   "Results: wide-area round trips on the host (`make bench-wan-tcp`)")


if __name__ == "__main__":
    sys.exit(main())
