#!/usr/bin/env python3
"""make bench-wan, run INSIDE the RDMA lab guest (bench/lab-bench.sh boots
it): rftp at round-trip times of 0, 10 and 50 ms, over TCP, siw and rxe.
The guest's kernel has netem (tests/rdma/lab/build-kernel.sh); all traffic
between the lab's two addresses passes the loopback device once each way,
so netem there delays every packet by half the round trip. The round trip
is measured as a TCP handshake to rftpd, not assumed.

Rows, each the median of --runs runs with rftp's default settings:
- the limit: iperf3 -Z -R moving the large file's bytes over one stream;
- one large file, get (GB/s), and its ratio to the same transport at 0 ms
  and, over TCP, to iperf3 at the same round trip;
- many small files, get -r -j 4 (files/s);
- the large file over TCP at 50 ms with -P 1, 2, 4 and 8 (--streams);
- the large file over TCP at 50 ms with 0.01 % loss;
- iperf3 and the large file on every path again at 0 and 50 ms, with the
  guest's TCP buffers raised as ESnet's fasterdata advises for long paths
  (TUNED_TCP_BUFFERS): what the host's window ceiling costs, apart from
  what rftp costs.
- the peers over TCP at every round trip, from the same tree (--peers):
  GridFTP (`globus-url-copy -r -cc 4`, with and without `-pp`; `-p 4` for
  the large file), XRootD (`xrdcp -r --parallel 4`; `xrdcp`) and
  vsftpd+curl (`--parallel-max 4`; one stream), with their own defaults.
Writes the table between the bench-wan markers of docs/benchmarks.md
unless --doc no.

The guest has one virtual CPU, shared by client and daemon: its absolute
rates are far below the host's. The ratios against 0 ms are the result."""

import argparse
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "rdma" / "guest"))
from conftest import BUILD, PASSWORD, Daemon  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from benchlib.wan_peers import Peers  # noqa: E402
from benchlib.wan_rows import (MiB, RTTS_MS, RftpClient, common_arguments, iperf3_get, measure,  # noqa: E402
                               measure_peers, measured_rtt_ms, prepare, publish)

MARK_BEGIN, MARK_END = "<!-- bench-wan:results:begin -->", "<!-- bench-wan:results:end -->"
# fasterdata.es.net's host tuning for paths up to about 100 ms: a 64 MiB
# ceiling for autotuning and for SO_RCVBUF/SO_SNDBUF. The kernel default
# ceiling (tcp_rmem's third field, 6 MiB here) caps one stream's window.
TUNED_TCP_BUFFERS = {
    "net/core/rmem_max": "67108864",
    "net/core/wmem_max": "67108864",
    "net/ipv4/tcp_rmem": "4096 131072 67108864",
    "net/ipv4/tcp_wmem": "4096 16384 67108864",
}


def set_path(rtt_ms: float, loss_pct: float = 0.0):
    """netem on lo: half the round trip each way, and the loss, if any."""
    if rtt_ms == 0 and loss_pct == 0:
        subprocess.run(["tc", "qdisc", "del", "dev", "lo", "root"], capture_output=True)
        return
    args = ["tc", "qdisc", "replace", "dev", "lo", "root", "netem", "delay", f"{rtt_ms / 2}ms", "limit", "100000"]
    if loss_pct:
        args += ["loss", f"{loss_pct}%"]
    subprocess.run(args, check=True)


def set_tcp_buffers(values: dict) -> dict:
    """Writes the sysctls in values; returns what they were."""
    before = {}
    for key, value in values.items():
        path = Path("/proc/sys") / key
        before[key] = path.read_text().strip()
        path.write_text(value)
    return before


def host_name() -> str:
    """The host the guest runs on (lab-bench.sh says; the guest has no name)."""
    return os.environ.get("RFTP_BENCH_HOST") or platform.node()


def describe(a, rtts: dict) -> tuple[str, str]:
    heading = f"UML guest (1 vCPU) on {host_name()}, kernel {platform.release()}, netem on lo"
    text = (f"Large file: {a.large_mib} MiB, tmpfs to tmpfs. Small files: {a.small_files} × 64 KiB, `-j 4`. "
            "rftp's default settings; the peers' own over TCP to 127.0.0.1 (the same loopback). "
            f"Median of {a.runs} runs. GB = 10^9 bytes. Round trips measured as TCP handshakes: "
            + ", ".join(f"{k} ms → {v:.1f} ms" for k, v in rtts.items()) + ". "
            "Host TCP buffers: the guest kernel's defaults, or raised to a 64 MiB ceiling (fasterdata).")
    return heading, text


def main():
    ap = argparse.ArgumentParser()
    common_arguments(ap, small_files=2000, streams=[1, 2, 4, 8])
    a = ap.parse_args()
    devices = [tuple(x.split("=", 1)) for x in os.environ["RFTP_LAB_DEVICES"].split()]
    work = Path(tempfile.mkdtemp(prefix="wan-bench-", dir="/tmp"))
    daemon = Daemon(work, [addr for _, addr in devices], extra_config="rdma: {pool_size: 64M}\n", log_level="notice")
    prepare(daemon.root, a.large_mib, a.small_files)
    size = a.large_mib * MiB
    tcp_addr = devices[0][1]
    tcp_url = f"rftp://alice@{tcp_addr}:{daemon.port}"
    # TCP over the first address; RDMA over each device's own.
    paths = [("tcp", "tcp", tcp_addr)] + [(dev, "rdma", addr) for dev, addr in devices]
    rows, rtts = [], {}
    defaults = None
    peers = Peers(work, daemon.root) if a.peers == "yes" else None
    rftp = RftpClient(BUILD, PASSWORD, [])
    try:
        for rtt in RTTS_MS:
            set_path(rtt)
            rtts[rtt] = measured_rtt_ms(tcp_addr, daemon.port, [])
            label = {"rtt": rtt, "tcp": "default"}
            measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size, [])
            for name, transport, addr in paths:
                url = f"rftp://alice@{addr}:{daemon.port}"
                measure(rows, a.runs, dict(label, path=name, test="large file get"),
                        rftp.large_get, url, transport, size, work)
                measure(rows, a.runs, dict(label, path=name, test="small files get -r -j 4"),
                        rftp.small_get, url, transport, a.small_files, work,
                        daemon.root / "small")
            if peers:
                measure_peers(rows, a.runs, label, peers, size, a.small_files)
        # Streams given with -P at 50 ms, beside the default's own choice above.
        for n in a.streams:
            measure(rows, a.runs, {"rtt": 50, "tcp": "default", "path": "tcp", "test": f"large file get -P {n}",
                                   "base": "large file get"}, rftp.large_get, tcp_url, "tcp", size, work, "-P", str(n))
        set_path(50, 0.01)
        rtts["50+loss"] = measured_rtt_ms(tcp_addr, daemon.port, [])
        label = {"rtt": "50, 0.01 % loss", "tcp": "default"}
        measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size, [])
        measure(rows, a.runs, dict(label, path="tcp", test="large file get"), rftp.large_get, tcp_url, "tcp", size, work)
        # The same large file with the host's TCP buffers raised.
        defaults = set_tcp_buffers(TUNED_TCP_BUFFERS)
        for rtt in (0, 50):
            set_path(rtt)
            label = {"rtt": rtt, "tcp": "64 MiB"}
            measure(rows, a.runs, dict(label, path="iperf3", test="iperf3 -Z -R"), iperf3_get, tcp_addr, size, [])
            for name, transport, addr in paths:
                measure(rows, a.runs, dict(label, path=name, test="large file get"),
                        rftp.large_get, f"rftp://alice@{addr}:{daemon.port}", transport, size, work)
    finally:
        if defaults:
            set_tcp_buffers(defaults)
        set_path(0)
        if peers:
            peers.stop()
        daemon.stop()

    return publish(rows, *describe(a, rtts), a.doc, (MARK_BEGIN, MARK_END),
                   "Results: wide-area round trips (`make bench-wan`)")


if __name__ == "__main__":
    sys.exit(main())
